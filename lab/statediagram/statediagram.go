// Package statediagram draws an Amazon States Language definition as a Mermaid state diagram: the top-level states,
// in the order asl.Parse lists them, with each transition (Next, a Choice's rules and Default, a Catch with the errors it catches)
// and the ends (End, Succeed, Fail). Parallel branches and Map item processors are drawn as their state only. The
// README's picture of the transfer workflow is this package's output, checked against the definition by its test.
package statediagram

import (
	"fmt"
	"strings"

	"github.com/transferflow/orchestrator/localaws/asl"
)

// Mermaid returns the Mermaid stateDiagram-v2 of the definition (JSON ASL text), one line per state declaration or
// edge, ending in a newline.
func Mermaid(definition []byte) (string, error) {
	def, err := asl.Parse(definition)
	if err != nil {
		return "", fmt.Errorf("statediagram: %w", err)
	}
	var b strings.Builder
	seen := map[string]bool{} // a Choice's rules may share a target: one edge each
	line := func(format string, args ...any) {
		l := fmt.Sprintf("    "+format+"\n", args...)
		if !seen[l] {
			seen[l] = true
			b.WriteString(l)
		}
	}
	b.WriteString("stateDiagram-v2\n")
	for _, name := range def.Order {
		if def.States[name].Type == "Choice" {
			line("state %s <<choice>>", name)
		}
	}
	line("[*] --> %s", def.StartAt)
	for _, name := range def.Order {
		s := def.States[name]
		for _, c := range s.Choices {
			line("%s --> %s", name, c.Next)
		}
		if s.Default != "" {
			line("%s --> %s: default", name, s.Default)
		}
		if s.Next != "" {
			line("%s --> %s", name, s.Next)
		}
		for _, c := range s.Catch {
			line("%s --> %s: %s", name, c.Next, strings.Join(c.ErrorEquals, ", "))
		}
		if s.End || s.Type == "Succeed" || s.Type == "Fail" {
			line("%s --> [*]", name)
		}
	}
	return b.String(), nil
}
