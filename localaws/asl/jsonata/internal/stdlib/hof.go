package stdlib

import (
	"math/rand/v2"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// fnMap is $map(array, function): the sequence of the function's results, undefined results left out.
func fnMap(c value.Context, args []any) (any, error) {
	arr := arg(args, 0)
	if arr == nil {
		return nil, nil
	}
	fn, _ := arg(args, 1).(value.Function)
	if fn == nil {
		return value.NewSequence(), nil
	}
	return definedResults(c, fn, items(arr), func(i int) any { return float64(i) }, asArray(arr))
}

// asArray returns v as an array (a single value wrapped), for passing the whole input to a function.
func asArray(v any) *value.Array {
	if a, ok := v.(*value.Array); ok {
		return a
	}
	return value.NewArray(v)
}

// fnFilter is $filter(array, predicate): the sequence of the items for which the predicate is true.
func fnFilter(c value.Context, args []any) (any, error) {
	arr := arg(args, 0)
	if arr == nil {
		return nil, nil
	}
	fn, _ := arg(args, 1).(value.Function)
	out := value.NewSequence()
	if fn == nil {
		return out, nil
	}
	err := eachKept(c, fn, arr, func(_ int, x any) error {
		out.Items = append(out.Items, x)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// eachKept calls yield with each item of arr (and its index) for which the predicate fn is true, every item when fn
// is nil, in order; it stops at the first error, of the predicate or of yield.
func eachKept(c value.Context, fn value.Function, arr any, yield func(i int, x any) error) error {
	whole := asArray(arr)
	for i, x := range items(arr) {
		if fn != nil {
			keep, err := hofTest(c, fn, x, float64(i), whole)
			if err != nil {
				return err
			}
			if !keep {
				continue
			}
		}
		if err := yield(i, x); err != nil {
			return err
		}
	}
	return nil
}

// fnSingle is $single(array, predicate): the one item for which the predicate is true (every item without a
// predicate); D3138 when more match, D3139 when none does.
func fnSingle(c value.Context, args []any) (any, error) {
	arr := arg(args, 0)
	if arr == nil {
		return nil, nil
	}
	fn, _ := arg(args, 1).(value.Function)
	var result any
	matched := false
	err := eachKept(c, fn, arr, func(i int, x any) error {
		if matched {
			return &value.Error{Code: "D3138", Index: i}
		}
		result, matched = x, true
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !matched {
		return nil, &value.Error{Code: "D3139"}
	}
	return result, nil
}

// fnReduce is $reduce(array, function, init): a left fold. The function takes the accumulator and the item, and
// the index and the array if it declares them; D3050 if it takes fewer than two parameters. Without init the first
// item starts the fold.
func fnReduce(c value.Context, args []any) (any, error) {
	arr := arg(args, 0)
	if arr == nil {
		return nil, nil
	}
	fn, _ := arg(args, 1).(value.Function)
	if fn == nil || hofArity(fn) < 2 {
		return nil, &value.Error{Code: "D3050", Index: 1}
	}
	arity := hofArity(fn)
	xs := items(arr)
	whole := asArray(arr)
	acc := arg(args, 2)
	i := 0
	if acc == nil && len(xs) > 0 {
		acc, i = xs[0], 1
	}
	for ; i < len(xs); i++ {
		call := []any{acc, xs[i]}
		if arity >= 3 {
			call = append(call, float64(i))
		}
		if arity >= 4 {
			call = append(call, whole)
		}
		r, err := c.Call(fn, call)
		if err != nil {
			return nil, err
		}
		acc = r
	}
	return acc, nil
}

// fnZip is $zip(array, …): arrays of the items at the same position, as many as the shortest array has.
func fnZip(_ value.Context, args []any) (any, error) {
	n := -1
	lists := make([][]any, len(args))
	for i, a := range args {
		lists[i] = items(a)
		if n < 0 || len(lists[i]) < n {
			n = len(lists[i])
		}
	}
	out := value.NewArray()
	for i := 0; i < n; i++ {
		tuple := make([]any, len(lists))
		for j, l := range lists {
			tuple[j] = l[i]
		}
		out.Items = append(out.Items, value.NewArray(tuple...))
	}
	return out, nil
}

// fnSift is $sift(object, predicate): the object with only the fields for which the predicate (called with the
// value, the key and the object) is true; undefined when none is.
func fnSift(c value.Context, args []any) (any, error) {
	o, ok := arg(args, 0).(*value.Object)
	fn, _ := arg(args, 1).(value.Function)
	if !ok || fn == nil {
		return nil, nil
	}
	out := value.NewObject(0)
	for i, k := range o.Keys() {
		v := o.Values()[i]
		keep, err := hofTest(c, fn, v, k, o)
		if err != nil {
			return nil, err
		}
		if keep {
			out.Set(k, v)
		}
	}
	if out.Len() == 0 {
		return nil, nil
	}
	return out, nil
}

// fnEach is $each(object, function): the sequence of the function's results for each field (value, key, object),
// undefined results left out.
func fnEach(c value.Context, args []any) (any, error) {
	o, ok := arg(args, 0).(*value.Object)
	fn, _ := arg(args, 1).(value.Function)
	if !ok || fn == nil {
		return value.NewSequence(), nil
	}
	keys := o.Keys()
	return definedResults(c, fn, o.Values(), func(i int) any { return keys[i] }, o)
}

// fnSort is $sort(array, comparator): a stable merge sort. Without a comparator the items must be all numbers or
// all strings (D3070), sorted ascending; a comparator(a, b) returning a true value (JavaScript's truth) puts b
// before a.
func fnSort(c value.Context, args []any) (any, error) {
	arr, xs, done := toReorder(args)
	if done {
		return arr, nil
	}
	var after func(a, b any) (bool, error)
	if fn, ok := arg(args, 1).(value.Function); ok {
		after = func(a, b any) (bool, error) {
			r, err := c.Call(fn, []any{a, b})
			return jsTruthy(r), err
		}
	} else {
		allNumbers, allStrings := true, true
		for _, x := range xs {
			f, isNum := x.(float64)
			allNumbers = allNumbers && isNum && f == f
			_, isStr := x.(string)
			allStrings = allStrings && isStr
		}
		if !allNumbers && !allStrings {
			return nil, &value.Error{Code: "D3070", Index: 1}
		}
		after = func(a, b any) (bool, error) {
			if fa, ok := a.(float64); ok {
				return fa > b.(float64), nil
			}
			return value.CompareStrings(a.(string), b.(string)) > 0, nil
		}
	}
	sorted, err := mergeSort(append([]any(nil), xs...), after)
	if err != nil {
		return nil, err
	}
	return value.NewArray(sorted...), nil
}

// mergeSort sorts xs in place, stably, calling after(a, b) to ask whether b must come before a.
func mergeSort(xs []any, after func(a, b any) (bool, error)) ([]any, error) {
	buf := make([]any, len(xs))
	var sortRange func(lo, hi int) error
	sortRange = func(lo, hi int) error {
		if hi-lo <= 1 {
			return nil
		}
		mid := lo + (hi-lo)/2
		if err := sortRange(lo, mid); err != nil {
			return err
		}
		if err := sortRange(mid, hi); err != nil {
			return err
		}
		i, j, k := lo, mid, lo
		for i < mid && j < hi {
			swap, err := after(xs[i], xs[j])
			if err != nil {
				return err
			}
			if swap {
				buf[k] = xs[j]
				j++
			} else {
				buf[k] = xs[i]
				i++
			}
			k++
		}
		k += copy(buf[k:], xs[i:mid])
		copy(buf[k:], xs[j:hi])
		copy(xs[lo:hi], buf[lo:hi])
		return nil
	}
	return xs, sortRange(0, len(xs))
}

// toReorder returns the first argument of $sort or $shuffle and its items; done is true when there is nothing to
// reorder (the argument is undefined, or has fewer than two items), and the function returns arr as it is.
func toReorder(args []any) (arr any, xs []any, done bool) {
	arr = arg(args, 0)
	if arr == nil {
		return nil, nil, true
	}
	xs = items(arr)
	return arr, xs, len(xs) <= 1
}

// fnShuffle is $shuffle(array): the items in a random order.
func fnShuffle(_ value.Context, args []any) (any, error) {
	arr, xs, done := toReorder(args)
	if done {
		return arr, nil
	}
	out := append([]any(nil), xs...)
	rand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return value.NewArray(out...), nil
}
