package parse

import (
	"strconv"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/ast"
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// Resolving the parent operator %.
//
// In a path, % is the context item of the step before the current one: in Account.Order.Product[%.OrderID = 1],
// the % in the predicate of Product is the Order that Product was reached from. Each further % (%.%) goes one step
// further back. The evaluator cannot find that item by looking around at run time (the path has moved on), so the
// parser resolves each % to a slot: the step whose context item the % reads records the slot as its Ancestor and
// the evaluator binds the slot's label in the tuple stream there; the % reads it back.
//
// A slot starts at level 1: the number of steps it still has to go back. Walking back across a step:
//   - a named step (a name or *) consumes one level; the step where the level reaches 0 is the one the % reads. If
//     that step is already the ancestor of another slot, the new slot takes the same label (one binding serves
//     both);
//   - a % step adds one level: going back across a % means its parent must be found first;
//   - a block is crossed through its last expression, a path through its steps from the last one (both then work
//     on tuples);
//   - anything else (a variable, a call, a literal…) has no parent to give: S0217.
//
// Where the walk starts and what it crosses depends on where the % is:
//   - in a path, the slots still pending in the last step (and the last step itself, if it is a %) walk back over
//     the steps before it, once, when that step is appended; consecutive focus (@$v) steps count as one, the first
//     of them. Slots that go past the first step become pending on the path itself;
//   - in a predicate a[p], the slots pending in p that are at level 1 are resolved by a (the % in a[%.x] is a's context),
//     the others lose the level a accounts for; all of them then stay pending on a, for the path a is part of;
//   - an operator, a constructor, a block, a condition, an assignment's value, a call's arguments and an order-by's
//     terms pass the pending slots of their parts on to themselves (inherit); a lambda's body, a transform, a
//     group-by, ~> and a call's procedure do not;
//   - at the top of the expression nothing may remain pending (S0217).
//
// These rules are JSONata 2.0.6's, corner cases included (a % left pending under a group-by or an ~> is silently
// dropped, as there): the trees must be the same for the evaluator to behave the same.

// parent makes the slot of a %: labels are numbered in the order the pass meets them.
func (w *rewriter) parent(s *synNode) *ast.Node {
	slot := &ast.Slot{Label: "!" + strconv.Itoa(w.slots), Level: 1, Index: w.slots}
	w.slots++
	return &ast.Node{Kind: ast.Parent, Slot: slot, Position: s.tok.end}
}

// pending is the list of slots n passes on: those still unresolved inside it, and its own if it is a %.
func pending(n *ast.Node) []*ast.Slot {
	if n.Kind != ast.Parent {
		return n.SeekingParent
	}
	out := make([]*ast.Slot, 0, len(n.SeekingParent)+1)
	return append(append(out, n.SeekingParent...), n.Slot)
}

// setPending records slots as pending on n.
func (w *rewriter) setPending(n *ast.Node, slots []*ast.Slot) {
	if n.SeekingParent == nil {
		w.marked = append(w.marked, n)
	}
	n.SeekingParent = slots
}

// inherit passes the pending slots of part on to n.
func (w *rewriter) inherit(n, part *ast.Node) {
	slots := pending(part)
	if len(slots) == 0 {
		return
	}
	merged := make([]*ast.Slot, 0, len(n.SeekingParent)+len(slots))
	w.setPending(n, append(append(merged, n.SeekingParent...), slots...))
}

// climb walks slot back across node (see above).
func (w *rewriter) climb(node *ast.Node, slot *ast.Slot) {
	switch node.Kind {
	case ast.Name, ast.Wildcard:
		slot.Level--
		if slot.Level == 0 {
			if node.Ancestor != nil {
				slot.Label = node.Ancestor.Label
			}
			node.Ancestor = slot
			node.Tuple = true
		}
	case ast.Parent:
		slot.Level++
	case ast.Block:
		if len(node.Exprs) > 0 {
			node.Tuple = true
			w.climb(node.Exprs[len(node.Exprs)-1], slot)
		}
	case ast.Path:
		node.Tuple = true
		for i := len(node.Steps) - 1; i >= 0; i-- {
			w.climb(node.Steps[i], slot)
			if slot.Level <= 0 {
				break
			}
		}
	default:
		panic(failure{&value.Error{Code: "S0217", Position: node.Position, Token: typeName(node)}})
	}
}

// settle resolves, once a step has been appended to path, the slots that step leaves pending against the steps
// before it.
func (w *rewriter) settle(path *ast.Node) {
	steps := path.Steps
	for _, slot := range pending(steps[len(steps)-1]) {
		i := len(steps) - 2
		for slot.Level > 0 {
			if i < 0 {
				w.setPending(path, append(path.SeekingParent, slot))
				break
			}
			// a run of focus steps is crossed as one, its first step
			for i > 0 && steps[i].Focus != "" && steps[i-1].Focus != "" {
				i--
			}
			w.climb(steps[i], slot)
			i--
		}
	}
}

// predicateParents resolves the slots of the predicate pred of step (see above). A predicate that is a bare %
// (a[%]) holds no pending slot: JSONata leaves its slot unresolved and passes nothing on.
func (w *rewriter) predicateParents(step, pred *ast.Node) {
	if len(pred.SeekingParent) == 0 {
		return
	}
	for _, slot := range pred.SeekingParent {
		if slot.Level == 1 {
			w.climb(step, slot)
		} else {
			slot.Level--
		}
	}
	w.inherit(step, pred)
}

// markTailCalls wraps the calls in tail position of a lambda's body (the body itself, the branches of a condition,
// the last expression of a block) in a thunk: a Lambda with Thunk set and the call as its body, which the evaluator
// runs in a loop instead of growing the stack. A call with predicates is not in tail position (they apply to its
// result).
func markTailCalls(n *ast.Node) *ast.Node {
	switch n.Kind {
	case ast.Call:
		if n.Predicates == nil {
			return &ast.Node{Kind: ast.Lambda, Thunk: true, Body: n, Position: n.Position}
		}
	case ast.Condition:
		n.Then = markTailCalls(n.Then)
		if n.Else != nil {
			n.Else = markTailCalls(n.Else)
		}
	case ast.Block:
		if k := len(n.Exprs); k > 0 {
			n.Exprs[k-1] = markTailCalls(n.Exprs[k-1])
		}
	}
	return n
}
