package jsonata

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	"math/rand/v2"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/format"
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/lang"
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/stdlib"
	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// stepFunctions are the functions Step Functions adds to JSONata, and its replacements of JSONata's $random (which
// takes a seed there) and $eval (which Step Functions does not offer). $uuid is bound per evaluation, with the
// engine's UUID source (uuidFunction).
var stepFunctions = []*value.Builtin{
	{Name: "partition", Signature: "<an:a>", Impl: partition},
	{Name: "range", Signature: "<nnn?:a>", Impl: rangeOf},
	{Name: "hash", Signature: "<ss?:s>", Impl: hashOf},
	{Name: "random", Signature: "<n?:n>", Impl: random},
	{Name: "parse", Signature: "<s:x>", Impl: parseJSON},
	{Name: "eval", Signature: "<sx?:x>", Impl: evalDisabled},
}

// library is every function an expression can call: JSONata's, then Step Functions' (which replace JSONata's of the
// same name).
var library = newLibrary()

func newLibrary() *lang.Library {
	byName := map[string]*value.Builtin{}
	var order []string
	for _, set := range [][]*value.Builtin{stdlib.All(), format.All(), lang.Builtins(), stepFunctions} {
		for _, fn := range set {
			if _, seen := byName[fn.Name]; !seen {
				order = append(order, fn.Name)
			}
			byName[fn.Name] = fn
		}
	}
	fns := make([]*value.Builtin, 0, len(order))
	for _, name := range order {
		fns = append(fns, byName[name])
	}
	lib, err := lang.NewLibrary(fns...)
	if err != nil {
		panic(fmt.Sprintf("jsonata: the function library: %v", err))
	}
	return lib
}

// uuidFunction returns $uuid for one evaluation, calling newUUID (a random version 4 UUID when nil).
func uuidFunction(newUUID func() string) *value.Builtin {
	if newUUID == nil {
		newUUID = randomUUID
	}
	return &value.Builtin{Name: "uuid", Signature: "<:s>", Impl: func(value.Context, []any) (any, error) {
		return newUUID(), nil
	}}
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

// partition splits an array into chunks of size (rounded towards zero); the last chunk holds the rest. An empty
// array or a size below 1 is undefined.
func partition(_ value.Context, args []any) (any, error) {
	arr, _ := args[0].(*value.Array)
	size, _ := args[1].(float64)
	n := int(math.Trunc(size))
	if arr == nil || n < 1 || len(arr.Items) == 0 {
		return nil, nil
	}
	out := &value.Array{}
	for i := 0; i < len(arr.Items); i += n {
		end := min(i+n, len(arr.Items))
		out.Items = append(out.Items, value.NewArray(append([]any(nil), arr.Items[i:end]...)...))
	}
	return out, nil
}

// maxRange is the number of elements $range builds at most.
const maxRange = 1000000

// rangeOf returns the numbers from start to end (inclusive when a step lands on it) by step; arguments are
// rounded towards zero. A missing step, a step of 0 or of the wrong sign is undefined; a single number is returned
// bare.
func rangeOf(_ value.Context, args []any) (any, error) {
	start, _ := args[0].(float64)
	end, _ := args[1].(float64)
	step, ok := args[2].(float64)
	if !ok {
		return nil, nil
	}
	s, e, d := math.Trunc(start), math.Trunc(end), math.Trunc(step)
	if d == 0 || (e > s && d < 0) || (e < s && d > 0) {
		return nil, nil
	}
	out := &value.Array{}
	for x := s; (d > 0 && x <= e) || (d < 0 && x >= e); x += d {
		if len(out.Items) >= maxRange {
			return nil, fmt.Errorf("$range would build more than %d elements", maxRange)
		}
		out.Items = append(out.Items, x)
	}
	if len(out.Items) == 1 {
		return out.Items[0], nil
	}
	return out, nil
}

var hashes = map[string]func() hash.Hash{"MD5": md5.New, "SHA-1": sha1.New, "SHA-256": sha256.New,
	"SHA-384": sha512.New384, "SHA-512": sha512.New}

// hashOf returns the hex digest of a string with one of the algorithms States.Hash knows; without an algorithm it
// is undefined.
func hashOf(_ value.Context, args []any) (any, error) {
	data, _ := args[0].(string)
	algorithm, ok := args[1].(string)
	if !ok {
		return nil, nil
	}
	h, ok := hashes[algorithm]
	if !ok {
		return nil, fmt.Errorf("the hash algorithm %q is not supported: use MD5, SHA-1, SHA-256, SHA-384 or SHA-512", algorithm)
	}
	d := h()
	d.Write([]byte(data))
	return hex.EncodeToString(d.Sum(nil)), nil
}

// random returns a number in [0, 1), the same for the same integer seed.
func random(_ value.Context, args []any) (any, error) {
	seed, ok := args[0].(float64)
	if !ok {
		return rand.Float64(), nil
	}
	s := uint64(int64(math.Trunc(seed)))
	return rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15)).Float64(), nil
}

// parseJSON is $parse: the value of a JSON text.
func parseJSON(_ value.Context, args []any) (any, error) {
	text, _ := args[0].(string)
	v, err := jsonvalue.Decode([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("$parse: the argument is not JSON: %v", err)
	}
	return value.FromEngine(v), nil
}

// evalDisabled stands for $eval, which Step Functions does not offer.
func evalDisabled(value.Context, []any) (any, error) {
	return nil, fmt.Errorf("$eval is not supported in Step Functions: use $parse")
}
