package jsonata

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"math"
	"math/rand/v2"
	"reflect"
	"time"

	lib "github.com/blues/jsonata-go"
	"github.com/blues/jsonata-go/jlib"
	"github.com/blues/jsonata-go/jtypes"
)

// awsFunctions are the functions Step Functions adds to JSONata, and the JSONata 2.x functions the library (JSONata
// 1.5) lacks, as callables the library binds like variables (see callable). $uuid is bound per evaluation, with the
// engine's UUID source.
var awsFunctions = map[string]interface{}{
	"partition": callable("partition", lib.Extension{Func: partition}),
	"range":     callable("range", lib.Extension{Func: rangeOf}),
	"hash":      callable("hash", lib.Extension{Func: hashOf}),
	"random":    callable("random", lib.Extension{Func: random}),
	"parse":     callable("parse", lib.Extension{Func: parse}),
	"eval":      callable("eval", lib.Extension{Func: evalDisabled}),

	"assert": callable("assert", lib.Extension{Func: assert}),
	// $formatInteger(number, picture) and $parseInteger(string, picture) are undefined for an undefined first
	// argument and take the context item when called with the picture alone (JSONata's signatures <n-s:s>, <s-s:n>).
	"formatInteger": callable("formatInteger", lib.Extension{Func: formatInteger,
		UndefinedHandler: jtypes.ArgUndefined(0), EvalContextHandler: jtypes.ArgCountEquals(1)}),
	"parseInteger": callable("parseInteger", lib.Extension{Func: parseInteger,
		UndefinedHandler: jtypes.ArgUndefined(0), EvalContextHandler: jtypes.ArgCountEquals(1)}),
}

// callable returns the library's callable for a function, found by evaluating "$name" in an expression the
// function is registered with: binding that value as a variable costs nothing per evaluation.
func callable(name string, ext lib.Extension) interface{} {
	e := lib.MustCompile("$" + name)
	if err := e.RegisterExts(map[string]lib.Extension{name: ext}); err != nil {
		panic(fmt.Sprintf("jsonata: register $%s: %v", name, err))
	}
	v, err := e.Eval(nil)
	if err != nil {
		panic(fmt.Sprintf("jsonata: look up $%s: %v", name, err))
	}
	return v
}

func uuidFunction(newUUID func() string) interface{} {
	if newUUID == nil {
		newUUID = randomUUID
	}
	return callable("uuid", lib.Extension{Func: func() string { return newUUID() }})
}

// randomUUID returns a random version 4 UUID.
func randomUUID() string {
	var b [16]byte
	for i := range b {
		b[i] = byte(rand.IntN(256))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// items returns the elements of an array argument (a single value is an array of one, as JSONata's sequences).
func items(v reflect.Value) []interface{} {
	v = jtypes.Resolve(v)
	if !v.IsValid() {
		return nil
	}
	if jtypes.IsArray(v) {
		out := make([]interface{}, v.Len())
		for i := range out {
			out[i] = v.Index(i).Interface()
		}
		return out
	}
	return []interface{}{v.Interface()}
}

// partition splits an array into chunks of size (rounded towards zero); the last chunk holds the rest. An empty
// array or a size below 1 is undefined.
func partition(arr reflect.Value, size float64) (interface{}, error) {
	n := int(math.Trunc(size))
	list := items(arr)
	if n < 1 || len(list) == 0 {
		return nil, jtypes.ErrUndefined
	}
	var out []interface{}
	for i := 0; i < len(list); i += n {
		end := min(i+n, len(list))
		out = append(out, append([]interface{}(nil), list[i:end]...))
	}
	return out, nil
}

// maxRange is the number of elements $range builds at most.
const maxRange = 1000000

// rangeOf returns the numbers from start to end (inclusive when a step lands on it) by step; arguments are
// rounded towards zero. A step of 0 or of the wrong sign is undefined; a single number is returned bare.
func rangeOf(start, end float64, step jtypes.OptionalFloat64) (interface{}, error) {
	if !step.IsSet() {
		return nil, jtypes.ErrUndefined
	}
	s, e, d := math.Trunc(start), math.Trunc(end), math.Trunc(step.Float64)
	if d == 0 || (e > s && d < 0) || (e < s && d > 0) {
		return nil, jtypes.ErrUndefined
	}
	var out []interface{}
	for x := s; (d > 0 && x <= e) || (d < 0 && x >= e); x += d {
		if len(out) >= maxRange {
			return nil, fmt.Errorf("$range would build more than %d elements", maxRange)
		}
		out = append(out, x)
	}
	if len(out) == 1 {
		return out[0], nil
	}
	return out, nil
}

var hashes = map[string]func() hash.Hash{"MD5": md5.New, "SHA-1": sha1.New, "SHA-256": sha256.New,
	"SHA-384": sha512.New384, "SHA-512": sha512.New}

// hashOf returns the hex digest of a string with one of the algorithms States.Hash knows.
func hashOf(data string, algorithm jtypes.OptionalString) (interface{}, error) {
	if !algorithm.IsSet() {
		return nil, jtypes.ErrUndefined
	}
	h, ok := hashes[algorithm.String]
	if !ok {
		return nil, fmt.Errorf("the hash algorithm %q is not supported: use MD5, SHA-1, SHA-256, SHA-384 or SHA-512", algorithm.String)
	}
	d := h()
	d.Write([]byte(data))
	return hex.EncodeToString(d.Sum(nil)), nil
}

// random returns a number in [0, 1), the same for the same integer seed.
func random(seed jtypes.OptionalFloat64) float64 {
	if !seed.IsSet() {
		return rand.Float64()
	}
	s := uint64(int64(math.Trunc(seed.Float64)))
	return rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15)).Float64()
}

// parse returns the value of a JSON text.
func parse(text string) (interface{}, error) {
	var v interface{}
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return nil, fmt.Errorf("$parse: the argument is not JSON: %v", err)
	}
	return v, nil
}

// evalDisabled stands for $eval, which Step Functions does not offer.
func evalDisabled(reflect.Value) (interface{}, error) {
	return nil, errors.New("$eval is not supported in Step Functions: use $parse")
}

// assertFailed is $assert's message when the call gives none (JSONata's).
const assertFailed = "$assert() statement failed"

// assert is JSONata 2's $assert(condition, message): undefined when the condition is true, an error with the message
// when it is false or undefined. A condition that is not a boolean is a type error, as in JSONata.
func assert(condition reflect.Value, message jtypes.OptionalString) (interface{}, error) {
	c := jtypes.Resolve(condition)
	if c.IsValid() && c.Kind() != reflect.Bool {
		return nil, errors.New(`argument 1 of function "assert" does not match function signature`)
	}
	if c.IsValid() && c.Bool() {
		return nil, jtypes.ErrUndefined
	}
	if message.IsSet() {
		return nil, errors.New(message.String)
	}
	return nil, errors.New(assertFailed)
}

// clockFunctions returns $now and $millis reading t, as JSONata reads the time once per evaluation.
func clockFunctions(t time.Time) (now, millis interface{}) {
	ms := t.UnixMilli()
	now = callable("now", lib.Extension{Func: func(picture, tz jtypes.OptionalString) (string, error) {
		return jlib.FromMillis(ms, picture, tz)
	}})
	millis = callable("millis", lib.Extension{Func: func() int64 { return ms }})
	return now, millis
}

// mergeFunction is $merge for one evaluation: the library's (jlib.Merge: the same result and errors), with the
// result's keys in the order JSONata 2.0 and AWS give them, the order of their first appearance across the objects
// merged (a later object's value replaces an earlier one's in its place), recorded in c for the conversion back.
// The library's own gives a Go map, whose keys the conversion would sort.
func mergeFunction(c *converter) interface{} {
	return callable("__merge", lib.Extension{Func: func(objs reflect.Value) (interface{}, error) {
		out, err := jlib.Merge(objs)
		m, ok := out.(map[string]interface{})
		if err != nil || !ok {
			return out, err
		}
		var order []string
		seen := map[string]bool{}
		add := func(v reflect.Value) {
			if o, ok := jtypes.Resolve(v).Interface().(map[string]interface{}); ok {
				for _, k := range c.keysOf(o) {
					if !seen[k] {
						seen[k] = true
						order = append(order, k)
					}
				}
			}
		}
		if objs = jtypes.Resolve(objs); jtypes.IsArray(objs) {
			for i := range objs.Len() {
				add(objs.Index(i))
			}
		} else {
			add(objs)
		}
		c.order[reflect.ValueOf(m).Pointer()] = order
		return m, nil
	}})
}
