package jsonata

import (
	"fmt"

	lib "github.com/blues/jsonata-go"
	"github.com/blues/jsonata-go/jparse"
)

// JSONata 2.0 (AWS's) keeps the value of a path's last step as it is when a single object has it, so
// `$states.input.items` on {"items": []} is [] (AWS records that Map over it: its output is []); the library
// (1.5) drops empty arrays from every path step and answers undefined. fieldPath is what an expression needs to
// answer as AWS does: for an expression that is a path ending in a plain field name, the path without that step,
// compiled, and the name.
type fieldPath struct {
	prefix *lib.Expr
	name   string
}

// lastField returns the fieldPath of src, or nil when src is not such a path (or defines functions, whose
// evaluation is guarded: see depth.go).
func lastField(src string) (fp *fieldPath) {
	defer func() {
		if recover() != nil {
			fp = nil
		}
	}()
	node, err := jparse.Parse(src)
	if err != nil {
		return nil
	}
	path, ok := node.(*jparse.PathNode)
	if !ok || path.KeepArrays || len(path.Steps) < 2 {
		return nil
	}
	name, ok := path.Steps[len(path.Steps)-1].(*jparse.NameNode)
	if !ok {
		return nil
	}
	prefix, err := compileSafe(jparse.PathNode{Steps: path.Steps[:len(path.Steps)-1]}.String())
	if err != nil {
		return nil
	}
	return &fieldPath{prefix: prefix, name: name.Value}
}

// emptyArray reports whether the path, evaluated with vars, ends at a field holding an empty array of a single
// object (or of a single-object array, as JSONata 2.0 reads one): the expression's value is then [] (the library
// answered undefined).
func (fp *fieldPath) emptyArray(vars map[string]interface{}) (bool, error) {
	run := *fp.prefix
	if err := run.RegisterVars(vars); err != nil {
		return false, fmt.Errorf("bind variables: %w", err)
	}
	out, err := evalSafe(&run)
	if err != nil {
		return false, nil
	}
	if a, ok := out.([]interface{}); ok && len(a) == 1 {
		out = a[0]
	}
	obj, ok := out.(map[string]interface{})
	if !ok {
		return false, nil
	}
	a, ok := obj[fp.name].([]interface{})
	return ok && len(a) == 0, nil
}
