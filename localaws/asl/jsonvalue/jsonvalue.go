// Package jsonvalue is the JSON value model of the engine. Decode turns JSON text into plain Go values (nil, bool,
// string, json.Number, []any) and *Object for objects, which keep their key order as Step Functions does; Marshal
// writes such values back as compact JSON text in that order.
package jsonvalue

import (
	"encoding/json"
	"errors"
	"sort"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Object is a JSON object that remembers the order of its keys. Values read from an Object must be treated as
// immutable: the engine shares them between states. Set and Delete are for building a new object.
//
// Keys and values are kept in two parallel slices; objects larger than indexFrom keys also get an index by key.
// Objects built from one key list (NewObjectKeys, Clone) share that list until a key is added or removed.
type Object struct {
	keys  []string
	vals  []any
	index map[string]int // position by key, for objects of more than indexFrom keys; nil otherwise
	// sharedIndex is set on a clone whose index is its original's: the clone rebuilds it before adding a key.
	sharedIndex bool
}

// indexFrom is the size above which an object indexes its keys; below it a linear scan is faster.
const indexFrom = 16

// Small objects are allocated together with their first keys and values, in one allocation.
type (
	object2 struct {
		Object
		k [2]string
		v [2]any
	}
	object4 struct {
		Object
		k [4]string
		v [4]any
	}
	object8 struct {
		Object
		k [8]string
		v [8]any
	}
	values2 struct {
		Object
		v [2]any
	}
	values4 struct {
		Object
		v [4]any
	}
	values8 struct {
		Object
		v [8]any
	}
)

// NewObject returns an empty object with room for n keys.
func NewObject(n int) *Object {
	switch {
	case n <= 0:
		return &Object{}
	case n <= 2:
		o := &object2{}
		o.keys, o.vals = o.k[:0], o.v[:0]
		return &o.Object
	case n <= 4:
		o := &object4{}
		o.keys, o.vals = o.k[:0], o.v[:0]
		return &o.Object
	case n <= 8:
		o := &object8{}
		o.keys, o.vals = o.k[:0], o.v[:0]
		return &o.Object
	}
	return &Object{keys: make([]string, 0, n), vals: make([]any, 0, n)}
}

// NewObjectKeys returns an object with the given keys, in that order, every value null, for the caller to fill in
// with SetAt or Set. The keys must be distinct; the slice is shared with the object and must not be modified
// afterwards.
func NewObjectKeys(keys []string) *Object {
	o := newValues(len(keys))
	o.keys = keys[:len(keys):len(keys)]
	if len(keys) > indexFrom {
		o.buildIndex()
	}
	return o
}

// newValues returns an object with n null values and no keys yet.
func newValues(n int) *Object {
	switch {
	case n == 0:
		return &Object{}
	case n <= 2:
		o := &values2{}
		o.vals = o.v[:n]
		return &o.Object
	case n <= 4:
		o := &values4{}
		o.vals = o.v[:n]
		return &o.Object
	case n <= 8:
		o := &values8{}
		o.vals = o.v[:n]
		return &o.Object
	}
	return &Object{vals: make([]any, n)}
}

// FromPairs builds an object from alternating keys and values, in that order.
func FromPairs(kv ...any) *Object {
	o := NewObject(len(kv) / 2)
	for i := 0; i+1 < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

// find returns the position of key k, or -1.
func (o *Object) find(k string) int {
	if o.index != nil {
		// The check against keys guards a clone whose original added a key to the index they share.
		if i, ok := o.index[k]; ok && i < len(o.keys) && o.keys[i] == k {
			return i
		}
		return -1
	}
	for i, x := range o.keys {
		if x == k {
			return i
		}
	}
	return -1
}

func (o *Object) buildIndex() {
	o.index = make(map[string]int, len(o.keys)+1)
	for i, k := range o.keys {
		o.index[k] = i
	}
	o.sharedIndex = false
}

// Get returns the value of key k.
func (o *Object) Get(k string) (any, bool) {
	if i := o.find(k); i >= 0 {
		return o.vals[i], true
	}
	return nil, false
}

// Set sets key k, appending it when new.
func (o *Object) Set(k string, v any) {
	if i := o.find(k); i >= 0 {
		o.vals[i] = v
		return
	}
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
	switch {
	case o.index == nil && len(o.keys) > indexFrom:
		o.buildIndex()
	case o.index != nil && o.sharedIndex:
		o.buildIndex()
	case o.index != nil:
		o.index[k] = len(o.keys) - 1
	}
}

// SetAt sets the value of the i-th key (0 ≤ i < Len()).
func (o *Object) SetAt(i int, v any) { o.vals[i] = v }

// Delete removes key k.
func (o *Object) Delete(k string) {
	i := o.find(k)
	if i < 0 {
		return
	}
	o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
	o.vals = append(o.vals[:i:i], o.vals[i+1:]...)
	if o.index != nil {
		o.buildIndex()
	}
}

// Keys returns the keys in order. The slice must not be modified.
func (o *Object) Keys() []string { return o.keys }

// Values returns the values in the order of Keys. The slice must not be modified.
func (o *Object) Values() []any { return o.vals }

// Len returns the number of keys.
func (o *Object) Len() int { return len(o.keys) }

// Clone returns a shallow copy that can be changed without affecting o.
func (o *Object) Clone() *Object {
	c := newValues(len(o.vals))
	c.keys = o.keys[:len(o.keys):len(o.keys)]
	copy(c.vals, o.vals)
	if o.index != nil {
		c.index, c.sharedIndex = o.index, true
	}
	return c
}

// MarshalJSON writes the object in key order.
func (o *Object) MarshalJSON() ([]byte, error) {
	return appendValue(nil, o)
}

// AsMap returns the values of an object by key, for *Object and map[string]any alike. For an *Object the map is
// a new copy; use Lookup to read one key without building it.
func AsMap(v any) (map[string]any, bool) {
	switch t := v.(type) {
	case *Object:
		m := make(map[string]any, len(t.keys))
		for i, k := range t.keys {
			m[k] = t.vals[i]
		}
		return m, true
	case map[string]any:
		return t, true
	}
	return nil, false
}

// Lookup returns the value of key k when v is an object (*Object or map[string]any) that has it.
func Lookup(v any, k string) (any, bool) {
	switch t := v.(type) {
	case *Object:
		return t.Get(k)
	case map[string]any:
		x, ok := t[k]
		return x, ok
	}
	return nil, false
}

// IsObject reports whether v is a JSON object.
func IsObject(v any) bool {
	switch v.(type) {
	case *Object, map[string]any:
		return true
	}
	return false
}

// objectLen returns the number of keys of an object value.
func objectLen(v any) int {
	switch t := v.(type) {
	case *Object:
		return t.Len()
	case map[string]any:
		return len(t)
	}
	return 0
}

// Equal reports whether two JSON values are equal; numbers compare by value and key order does not matter.
func Equal(a, b any) bool {
	if IsObject(a) {
		if !IsObject(b) || objectLen(a) != objectLen(b) {
			return false
		}
		eq := true
		eachField(a, func(k string, v any) bool {
			w, ok := Lookup(b, k)
			eq = ok && Equal(v, w)
			return eq
		})
		return eq
	}
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		// Out of float64's range a number reads as ±Inf (or 0), as Java's Double.parseDouble reads it on AWS.
		fx, e1 := strconv.ParseFloat(string(x), 64)
		fy, e2 := strconv.ParseFloat(string(y), 64)
		return numberOK(e1) && numberOK(e2) && fx == fy
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	}
	return false
}

// numberOK reports whether ParseFloat read a number: err is nil, or the number is out of float64's range.
func numberOK(err error) bool { return err == nil || errors.Is(err, strconv.ErrRange) }

// eachField calls f on every field of an object value until f returns false.
func eachField(v any, f func(k string, v any) bool) {
	switch t := v.(type) {
	case *Object:
		for i, k := range t.keys {
			if !f(k, t.vals[i]) {
				return
			}
		}
	case map[string]any:
		for k, x := range t {
			if !f(k, x) {
				return
			}
		}
	}
}

// HashMapOrder returns keys in the iteration order of a java.util.HashMap into which they were put in the given
// order (default capacity 16, load factor 0.75). Step Functions emits the ".$" fields of a Parameters,
// ResultSelector or ItemSelector template, and the result of States.JsonMerge, in this order; the conformance
// corpus shows it.
func HashMapOrder(keys []string) []string {
	n := 16
	for float64(len(keys)) > float64(n)*0.75 {
		n *= 2
	}
	bucket := make([]uint32, len(keys))
	for i, k := range keys {
		h := javaStringHash(k)
		bucket[i] = (h ^ (h >> 16)) & uint32(n-1)
	}
	// A bucket lists its keys in insertion order: a stable sort by bucket gives the iteration order.
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return bucket[idx[a]] < bucket[idx[b]] })
	out := make([]string, len(keys))
	for i, j := range idx {
		out[i] = keys[j]
	}
	return out
}

// javaStringHash is java.lang.String.hashCode: s[0]*31^(n-1) + … over UTF-16 code units.
func javaStringHash(s string) uint32 {
	var h uint32
	for _, r := range s {
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			h = 31*h + uint32(r1)
			h = 31*h + uint32(r2)
			continue
		}
		h = 31*h + uint32(r)
	}
	return h
}
