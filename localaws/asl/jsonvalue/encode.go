package jsonvalue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/transferflow/orchestrator/internal/jsonstring"
)

// bufPool holds scratch buffers for Marshal.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooled is the largest buffer kept for reuse.
const maxPooled = 64 << 10

// Marshal renders v as compact JSON text, objects in key order (plain maps sorted by key), without HTML escaping.
func Marshal(v any) string {
	bp := bufPool.Get().(*[]byte)
	b, err := appendValue((*bp)[:0], v)
	var s string
	if err != nil {
		s = fmt.Sprint(v)
	} else {
		s = string(b)
	}
	if cap(b) <= maxPooled {
		*bp = b[:0]
		bufPool.Put(bp)
	}
	return s
}

// Append appends the JSON text of v, as Marshal writes it, to dst.
func Append(dst []byte, v any) ([]byte, error) {
	return appendValue(dst, v)
}

// AppendString appends s as a JSON string, as Marshal writes it, to dst.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s) }

func appendValue(b []byte, v any) ([]byte, error) {
	var err error
	switch t := v.(type) {
	case nil:
		b = append(b, "null"...)
	case bool:
		b = strconv.AppendBool(b, t)
	case string:
		b = appendString(b, t)
	case int:
		b = strconv.AppendInt(b, int64(t), 10)
	case int64:
		b = strconv.AppendInt(b, t, 10)
	case json.Number:
		if t == "" {
			b = append(b, '0')
		} else {
			b = append(b, t...)
		}
	case *Object:
		b = append(b, '{')
		for i, k := range t.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			if b, err = appendValue(b, t.vals[i]); err != nil {
				return nil, err
			}
		}
		b = append(b, '}')
	case map[string]any:
		return appendMap(b, t)
	case []any:
		b = append(b, '[')
		for i, x := range t {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendValue(b, x); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	default:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return nil, err
		}
		b = append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
	}
	return b, nil
}

// AppendMap appends m as Marshal writes it (keys sorted) to dst. Unlike Append, it does not make m escape to the heap.
func AppendMap(dst []byte, m map[string]any) ([]byte, error) { return appendMap(dst, m) }

func appendMap(b []byte, m map[string]any) ([]byte, error) {
	var small [8]string // the keys of a small map (the engine's event details) without an allocation
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendValue(b, m[k]); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendString appends s as a JSON string, as encoding/json writes it without HTML escaping.
func appendString(b []byte, s string) []byte { return jsonstring.Append(b, s) }
