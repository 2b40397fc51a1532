// Package jsonvalue is the JSON value model of the engine. Decode turns JSON text into plain Go values (nil, bool,
// string, json.Number, []any) and *Object for objects, which keep their key order as Step Functions does; Marshal
// writes such values back as compact JSON text in that order.
package jsonvalue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Object is a JSON object that remembers the order of its keys. Values read from an Object must be treated as
// immutable: the engine shares them between states. Set and Delete are for building a new object.
type Object struct {
	keys []string
	m    map[string]any
}

// NewObject returns an empty object with room for n keys.
func NewObject(n int) *Object {
	return &Object{keys: make([]string, 0, n), m: make(map[string]any, n)}
}

// FromPairs builds an object from alternating keys and values, in that order.
func FromPairs(kv ...any) *Object {
	o := NewObject(len(kv) / 2)
	for i := 0; i+1 < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

// Get returns the value of key k.
func (o *Object) Get(k string) (any, bool) {
	v, ok := o.m[k]
	return v, ok
}

// Set sets key k, appending it when new.
func (o *Object) Set(k string, v any) {
	if _, ok := o.m[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.m[k] = v
}

// Delete removes key k.
func (o *Object) Delete(k string) {
	if _, ok := o.m[k]; !ok {
		return
	}
	delete(o.m, k)
	for i, x := range o.keys {
		if x == k {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
}

// Keys returns the keys in order. The slice must not be modified.
func (o *Object) Keys() []string { return o.keys }

// Len returns the number of keys.
func (o *Object) Len() int { return len(o.keys) }

// Map returns the values by key. The map must not be modified.
func (o *Object) Map() map[string]any { return o.m }

// Clone returns a shallow copy that can be changed without affecting o.
func (o *Object) Clone() *Object {
	c := &Object{keys: append(make([]string, 0, len(o.keys)+1), o.keys...), m: make(map[string]any, len(o.m)+1)}
	for k, v := range o.m {
		c.m[k] = v
	}
	return c
}

// MarshalJSON writes the object in key order.
func (o *Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := encode(&b, o); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Decode parses one JSON value; objects become *Object and numbers json.Number.
func Decode(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := decodeValue(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return v, nil
}

func decodeValue(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := NewObject(4)
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeValue(d)
				if err != nil {
					return nil, err
				}
				o.Set(k, v)
			}
			if _, err := d.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			a := []any{}
			for d.More() {
				v, err := decodeValue(d)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if _, err := d.Token(); err != nil {
				return nil, err
			}
			return a, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil
	}
}

// Marshal renders v as compact JSON text, objects in key order (plain maps sorted by key), without HTML escaping.
func Marshal(v any) string {
	var b bytes.Buffer
	if err := encode(&b, v); err != nil {
		return fmt.Sprint(v)
	}
	return b.String()
}

func encode(b *bytes.Buffer, v any) error {
	switch t := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case string:
		writeString(b, t)
	case json.Number:
		if t == "" {
			b.WriteString("0")
		} else {
			b.WriteString(string(t))
		}
	case *Object:
		b.WriteByte('{')
		for i, k := range t.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			if err := encode(b, t.m[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			if err := encode(b, t[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, x := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := encode(b, x); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		enc := json.NewEncoder(b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
	}
	return nil
}

const hexDigits = "0123456789abcdef"

func writeString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c == '\t':
				b.WriteString(`\t`)
			case c == '\b':
				b.WriteString(`\b`)
			case c == '\f':
				b.WriteString(`\f`)
			case c < 0x20:
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xf])
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(`\ufffd`)
		} else if r == '\u2028' || r == '\u2029' {
			b.WriteString(`\u202`)
			b.WriteByte(hexDigits[r&0xf])
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}

// AsMap returns the values of an object by key, for *Object and map[string]any alike.
func AsMap(v any) (map[string]any, bool) {
	switch t := v.(type) {
	case *Object:
		return t.m, true
	case map[string]any:
		return t, true
	}
	return nil, false
}

// IsObject reports whether v is a JSON object.
func IsObject(v any) bool {
	_, ok := AsMap(v)
	return ok
}

// Equal reports whether two JSON values are equal; numbers compare by value and key order does not matter.
func Equal(a, b any) bool {
	if am, ok := AsMap(a); ok {
		bm, ok := AsMap(b)
		if !ok || len(am) != len(bm) {
			return false
		}
		for k, v := range am {
			w, ok := bm[k]
			if !ok || !Equal(v, w) {
				return false
			}
		}
		return true
	}
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		fx, e1 := strconv.ParseFloat(string(x), 64)
		fy, e2 := strconv.ParseFloat(string(y), 64)
		return e1 == nil && e2 == nil && fx == fy
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

// HashMapOrder returns keys in the iteration order of a java.util.HashMap into which they were put in the given
// order (default capacity 16, load factor 0.75). Step Functions emits the ".$" fields of a Parameters,
// ResultSelector or ItemSelector template, and the result of States.JsonMerge, in this order; the conformance
// corpus shows it.
func HashMapOrder(keys []string) []string {
	n := 16
	for float64(len(keys)) > float64(n)*0.75 {
		n *= 2
	}
	buckets := make([][]string, n)
	for _, k := range keys {
		h := javaStringHash(k)
		i := (h ^ (h >> 16)) & uint32(n-1)
		buckets[i] = append(buckets[i], k)
	}
	out := make([]string, 0, len(keys))
	for _, b := range buckets {
		out = append(out, b...)
	}
	return out
}

// javaStringHash is java.lang.String.hashCode: s[0]*31^(n-1) + … over UTF-16 code units.
func javaStringHash(s string) uint32 {
	var h uint32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + uint32(u)
	}
	return h
}
