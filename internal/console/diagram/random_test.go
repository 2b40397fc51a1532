package diagram

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
)

// randomMachine builds a machine of n states whose transitions go anywhere: forward, back, to themselves, with
// Choice fan-outs, catchers, and Parallel and Map states holding smaller random machines.
func randomMachine(r *rand.Rand, prefix string, n, depth int) map[string]any {
	name := func(i int) string { return fmt.Sprintf("%s%d", prefix, i) }
	states := map[string]any{}
	for i := range n {
		target := func() string { return name(r.IntN(n)) }
		s := map[string]any{}
		switch k := r.IntN(10); {
		case k < 2 && n > 1:
			s["Type"] = "Choice"
			var rules []any
			for j := range 1 + r.IntN(5) {
				rules = append(rules, map[string]any{"Variable": fmt.Sprintf("$.v%d", j), "NumericEquals": j, "Next": target()})
			}
			s["Choices"] = rules
			s["Default"] = target()
		case k == 2:
			s["Type"] = "Succeed"
		case k == 3 && depth < 2:
			s["Type"] = "Parallel"
			var branches []any
			for j := range 1 + r.IntN(3) {
				branches = append(branches, randomMachine(r, fmt.Sprintf("%sp%d_%d_", prefix, i, j), 1+r.IntN(4), depth+1))
			}
			s["Branches"] = branches
		case k == 4 && depth < 2:
			s["Type"] = "Map"
			s["ItemProcessor"] = randomMachine(r, fmt.Sprintf("%sm%d_", prefix, i), 1+r.IntN(5), depth+1)
		default:
			s["Type"] = "Task"
			s["Resource"] = "arn:aws:states:::lambda:invoke"
			if r.IntN(3) == 0 {
				s["Retry"] = []any{map[string]any{"ErrorEquals": []string{"States.ALL"}}}
			}
			if r.IntN(2) == 0 {
				s["Catch"] = []any{map[string]any{"ErrorEquals": []string{"Err" + fmt.Sprint(r.IntN(9))}, "Next": target()}}
			}
		}
		if s["Type"] != "Choice" && s["Type"] != "Succeed" {
			if r.IntN(4) == 0 || i == n-1 {
				s["End"] = true
			} else {
				s["Next"] = target()
			}
		}
		states[name(i)] = s
	}
	return map[string]any{"StartAt": name(0), "States": states}
}

func TestRandomMachinesHaveNoOverlaps(t *testing.T) {
	for seed := range uint64(60) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			def, err := json.Marshal(randomMachine(r, "S", 4+r.IntN(30), 0))
			if err != nil {
				t.Fatal(err)
			}
			l := mustLayout(t, def)
			checkLayout(t, l)
			read(t, l.SVG(Marks{}))
		})
	}
}
