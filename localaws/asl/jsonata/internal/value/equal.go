package value

import "reflect"

// Equal is JSONata's deep equality (the = operator, $distinct): numbers, strings, booleans and null by value (NaN
// differs from itself), arrays item by item, objects by the same keys in any order with equal values, functions by
// identity. Undefined equals only undefined (it can appear inside arrays a function built).
func Equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case NullType:
		return IsNull(b)
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case *Array:
		y, ok := b.(*Array)
		if !ok || len(x.Items) != len(y.Items) {
			return false
		}
		for i := range x.Items {
			if !Equal(x.Items[i], y.Items[i]) {
				return false
			}
		}
		return true
	case *Object:
		y, ok := b.(*Object)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for i, k := range x.Keys() {
			w, found := y.Get(k)
			if !found || !Equal(x.Values()[i], w) {
				return false
			}
		}
		return true
	}
	// A function: the same value. Comparing interfaces whose dynamic type is not comparable would panic, so such a
	// value is equal to nothing.
	if b == nil || reflect.TypeOf(a) != reflect.TypeOf(b) || !reflect.TypeOf(a).Comparable() {
		return false
	}
	return a == b
}
