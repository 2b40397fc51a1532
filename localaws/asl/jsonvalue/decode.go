package jsonvalue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Decode parses one JSON value; objects become *Object and numbers json.Number.
//
// Well-formed documents are read by a single pass over the bytes. Anything that pass does not accept (malformed
// text, a nesting deeper than encoding/json allows) is read again by encoding/json, whose result and error
// messages are the reference.
func Decode(data []byte) (any, error) {
	return DecodeString(string(data))
}

// DecodeString is Decode for JSON text held in a string. The strings of the result share the text's memory.
func DecodeString(text string) (any, error) {
	d := fastDecoder{data: text}
	if v, ok := d.value(0); ok {
		d.space()
		if d.pos == len(text) {
			return v, nil
		}
	}
	return decodeSlow([]byte(text))
}

// maxDepth is the nesting encoding/json accepts.
const maxDepth = 10000

// fastDecoder reads well-formed JSON; it reports false, and nothing else, at anything unusual.
type fastDecoder struct {
	data string
	pos  int
}

func (d *fastDecoder) space() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *fastDecoder) value(depth int) (any, bool) {
	d.space()
	if d.pos >= len(d.data) {
		return nil, false
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		if depth >= maxDepth {
			return nil, false
		}
		return d.object(depth + 1)
	case c == '[':
		if depth >= maxDepth {
			return nil, false
		}
		return d.array(depth + 1)
	case c == '"':
		return d.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	}
	return nil, false
}

func (d *fastDecoder) literal(word string) bool {
	if !strings.HasPrefix(d.data[d.pos:], word) {
		return false
	}
	d.pos += len(word)
	return true
}

func (d *fastDecoder) object(depth int) (any, bool) {
	d.pos++ // '{'
	o := NewObject(4)
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return o, true
	}
	for {
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return nil, false
		}
		k, ok := d.str()
		if !ok {
			return nil, false
		}
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return nil, false
		}
		d.pos++
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		o.Set(k.(string), v)
		if end, ok := d.separator('}'); !ok {
			return nil, false
		} else if end {
			return o, true
		}
	}
}

func (d *fastDecoder) array(depth int) (any, bool) {
	d.pos++ // '['
	a := []any{}
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return a, true
	}
	for {
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		if end, ok := d.separator(']'); !ok {
			return nil, false
		} else if end {
			return a, true
		}
	}
}

// separator reads what follows a member of an object or an element of an array: a comma (more follow) or closing,
// the bracket that ends it (end). ok is false for anything else.
func (d *fastDecoder) separator(closing byte) (end, ok bool) {
	d.space()
	if d.pos >= len(d.data) {
		return false, false
	}
	switch d.data[d.pos] {
	case ',':
		d.pos++
		return false, true
	case closing:
		d.pos++
		return true, true
	}
	return false, false
}

// str reads a string. Plain ASCII text is taken as it is; a string with escapes or other bytes is handed to
// encoding/json, so that escapes, surrogates and invalid UTF-8 come out exactly as it decodes them.
func (d *fastDecoder) str() (any, bool) {
	start := d.pos
	d.pos++ // '"'
	simple := true
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			if simple {
				return d.data[start+1 : d.pos-1], true
			}
			var s string
			if err := json.Unmarshal([]byte(d.data[start:d.pos]), &s); err != nil {
				return nil, false
			}
			return s, true
		case c == '\\':
			simple = false
			d.pos += 2
			continue
		case c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			simple = false
		}
		d.pos++
	}
	return nil, false
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? as a json.Number of the same text.
func (d *fastDecoder) number() (any, bool) {
	start := d.pos
	if d.data[d.pos] == '-' {
		d.pos++
	}
	switch {
	case d.pos < len(d.data) && d.data[d.pos] == '0':
		d.pos++
	case d.pos < len(d.data) && d.data[d.pos] >= '1' && d.data[d.pos] <= '9':
		d.digits()
	default:
		return nil, false
	}
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		d.pos++
		if !d.digits() {
			return nil, false
		}
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if !d.digits() {
			return nil, false
		}
	}
	return json.Number(d.data[start:d.pos]), true
}

// digits skips one or more decimal digits; it reports false when there is none.
func (d *fastDecoder) digits() bool {
	start := d.pos
	for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
		d.pos++
	}
	return d.pos > start
}

// decodeSlow decodes with encoding/json's token reader.
func decodeSlow(data []byte) (any, error) {
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
