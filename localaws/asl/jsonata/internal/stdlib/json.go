package stdlib

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// maxJSONDepth bounds the nesting $string and error messages write, so that a value built to be absurdly deep is an
// error rather than a stack overflow.
const maxJSONDepth = 10000

// jsonWriter writes values as JavaScript's JSON.stringify does, with the adjustments of JSONata's $string when
// forString is set: numbers rounded to 15 significant digits, functions written as "", and an infinite number
// raising D1001. Without forString (error messages) numbers are written as they are, NaN and infinities as null,
// functions left out.
type jsonWriter struct {
	b         strings.Builder
	indent    string
	forString bool
}

// write appends v at the given depth. It reports whether anything was written: a function or undefined outside
// forString writes nothing, as JSON.stringify leaves such a value out.
func (w *jsonWriter) write(v any, depth int) (bool, error) {
	if depth > maxJSONDepth {
		return false, ErrTooLarge
	}
	switch t := v.(type) {
	case nil:
		return false, nil
	case value.NullType:
		w.b.WriteString("null")
	case bool:
		w.b.WriteString(strconv.FormatBool(t))
	case float64:
		switch {
		case math.IsNaN(t):
			w.b.WriteString("null")
		case math.IsInf(t, 0):
			if w.forString {
				return false, &value.Error{Code: "D1001", Value: t}
			}
			w.b.WriteString("null")
		case w.forString:
			// Rounding the largest doubles to 15 digits overflows to Infinity, which JSON writes as null.
			if r := precision15(t); math.IsInf(r, 0) {
				w.b.WriteString("null")
			} else {
				w.b.WriteString(numberText(r))
			}
		default:
			w.b.WriteString(numberText(t))
		}
	case string:
		writeJSONString(&w.b, t)
	case *value.Array:
		if len(t.Items) == 0 {
			w.b.WriteString("[]")
			return true, nil
		}
		w.b.WriteByte('[')
		for i, x := range t.Items {
			if i > 0 {
				w.b.WriteByte(',')
			}
			w.newline(depth + 1)
			ok, err := w.write(x, depth+1)
			if err != nil {
				return false, err
			}
			if !ok {
				w.b.WriteString("null")
			}
		}
		w.newline(depth)
		w.b.WriteByte(']')
	case *value.Object:
		w.b.WriteByte('{')
		n := 0
		for i, k := range t.Keys() {
			x := t.Values()[i]
			if !w.writes(x) {
				continue
			}
			if n > 0 {
				w.b.WriteByte(',')
			}
			n++
			w.newline(depth + 1)
			writeJSONString(&w.b, k)
			w.b.WriteByte(':')
			if w.indent != "" {
				w.b.WriteByte(' ')
			}
			if _, err := w.write(x, depth+1); err != nil {
				return false, err
			}
		}
		if n > 0 {
			w.newline(depth)
		}
		w.b.WriteByte('}')
	case value.Function:
		if !w.forString {
			return false, nil
		}
		w.b.WriteString(`""`)
	default:
		return false, nil
	}
	return true, nil
}

// writes reports whether write would write v (JSON.stringify leaves undefined and, outside $string, functions out
// of objects).
func (w *jsonWriter) writes(v any) bool {
	switch v.(type) {
	case nil:
		return false
	case value.Function:
		return w.forString
	}
	return true
}

// newline starts a line at the given depth when pretty-printing.
func (w *jsonWriter) newline(depth int) {
	if w.indent == "" {
		return
	}
	w.b.WriteByte('\n')
	for range depth {
		w.b.WriteString(w.indent)
	}
}

// writeJSONString writes s quoted as JSON.stringify quotes strings: ", \ and control characters escaped (with the
// short forms \b \f \n \r \t), everything else as is.
func writeJSONString(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			b.WriteRune(r) // an invalid byte becomes U+FFFD
			i += size
			continue
		}
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
			} else {
				b.WriteByte(c)
			}
		}
		i++
	}
	b.WriteByte('"')
}

// precision15 rounds f to 15 significant digits as JavaScript's Number(f.toPrecision(15)) does: to the nearest,
// and on an exact tie to the larger magnitude (Go's formatting would round a tie to even).
func precision15(f float64) float64 {
	if f == 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return f
	}
	shortest := strconv.FormatFloat(math.Abs(f), 'e', -1, 64)
	mant := shortest[:strings.IndexByte(shortest, 'e')]
	digits := strings.Replace(mant, ".", "", 1)
	if len(digits) <= 15 {
		return f
	}
	if len(digits) == 16 && digits[15] == '5' {
		// The shortest form that reads back as f ends in a 5 at the 16th digit: f may be exactly halfway.
		exact := new(big.Rat).SetFloat64(math.Abs(f))
		if half, ok := new(big.Rat).SetString(shortest); ok && exact.Cmp(half) == 0 {
			up, _ := strconv.ParseFloat(nextUp15(shortest), 64)
			return math.Copysign(up, f)
		}
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'e', 14, 64), 64)
	return r
}

// nextUp15 takes a number written d.ddddddddddddddd5e±x (16 digits) and returns it rounded up to 15 digits.
func nextUp15(s string) string {
	e := strings.IndexByte(s, 'e')
	digits := []byte(strings.Replace(s[:e], ".", "", 1))[:15]
	exp, _ := strconv.Atoi(s[e+1:])
	i := len(digits) - 1
	for ; i >= 0; i-- {
		if digits[i] < '9' {
			digits[i]++
			break
		}
		digits[i] = '0'
	}
	if i < 0 {
		digits = append([]byte{'1'}, digits[:14]...)
		exp++
	}
	return string(digits[:1]) + "." + string(digits[1:]) + "e" + strconv.Itoa(exp)
}

// messageText writes a value into an error message as JSONata does (JSON.stringify): undefined and functions as
// undefined, numbers as JavaScript writes them.
func messageText(v any) string {
	w := jsonWriter{}
	ok, err := w.write(v, 0)
	if err != nil || !ok {
		return "undefined"
	}
	return w.b.String()
}

// fnString is $string(arg, prettify).
func fnString(_ value.Context, args []any) (any, error) {
	v := arg(args, 0)
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		return t, nil
	case value.Function:
		return "", nil
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return nil, &value.Error{Code: "D3001", Value: t}
		}
	case *value.Array:
		if t.OuterWrapper && len(t.Items) > 0 {
			v = t.Items[0]
		}
	}
	w := jsonWriter{forString: true}
	if pretty, _ := arg(args, 1).(bool); pretty {
		w.indent = "  "
	}
	ok, err := w.write(v, 0)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, nil
	}
	return w.b.String(), nil
}

// numberText writes f as JavaScript's String(f) does. It relies on value.NumberText, except between 1e-7 and 1e-6,
// which JavaScript writes in exponent form (1e-7, 5.5e-7) and value.NumberText in decimals.
func numberText(f float64) string {
	if a := math.Abs(f); a >= 1e-7 && a < 1e-6 {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		return strings.Replace(s, "e-07", "e-7", 1)
	}
	return value.NumberText(f)
}
