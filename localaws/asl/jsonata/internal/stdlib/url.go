package stdlib

import (
	"strings"
	"unicode/utf8"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// Characters that JavaScript's encodeURIComponent leaves as they are (besides letters and digits), and those that
// encodeURI leaves as well. decodeURI keeps the escapes of the latter set's reserved characters.
const (
	componentMarks = "-_.!~*'()"
	uriReserved    = ";/?:@&=+$,#"
)

// fnEncodeURLComponent is $encodeUrlComponent(str): JavaScript's encodeURIComponent.
func fnEncodeURLComponent(_ value.Context, args []any) (any, error) {
	return urlCode(args, "encodeUrlComponent", func(s string) (string, bool) { return encodeURI(s, componentMarks) })
}

// fnEncodeURL is $encodeUrl(str): JavaScript's encodeURI.
func fnEncodeURL(_ value.Context, args []any) (any, error) {
	return urlCode(args, "encodeUrl", func(s string) (string, bool) { return encodeURI(s, componentMarks+uriReserved) })
}

// fnDecodeURLComponent is $decodeUrlComponent(str): JavaScript's decodeURIComponent.
func fnDecodeURLComponent(_ value.Context, args []any) (any, error) {
	return urlCode(args, "decodeUrlComponent", func(s string) (string, bool) { return decodeURI(s, "") })
}

// fnDecodeURL is $decodeUrl(str): JavaScript's decodeURI.
func fnDecodeURL(_ value.Context, args []any) (any, error) {
	return urlCode(args, "decodeUrl", func(s string) (string, bool) { return decodeURI(s, uriReserved) })
}

// urlCode applies an encoding or decoding to the string argument; a malformed string is D3140.
func urlCode(args []any, name string, code func(string) (string, bool)) (any, error) {
	s, ok := arg(args, 0).(string)
	if !ok {
		return nil, nil
	}
	out, ok := code(s)
	if !ok {
		return nil, &value.Error{Code: "D3140", Value: s, FunctionName: name}
	}
	return out, nil
}

// encodeURI escapes every UTF-8 byte of s as %XX except ASCII letters, digits and the characters of keep. A string
// that is not valid UTF-8 (JavaScript: a lone surrogate) cannot be encoded.
func encodeURI(s string, keep string) (string, bool) {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return "", false
		}
		c := s[i]
		if size == 1 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte(keep, c) >= 0) {
			b.WriteByte(c)
		} else {
			for j := i; j < i+size; j++ {
				b.WriteByte('%')
				b.WriteByte(hex[s[j]>>4])
				b.WriteByte(hex[s[j]&0xf])
			}
		}
		i += size
	}
	return b.String(), true
}

// decodeURI replaces %XX escapes by the UTF-8 characters they spell, except that an escape of an ASCII character
// of keep stays as written. A % not followed by two hexadecimal digits, or escapes that do not spell a valid UTF-8
// character, make the string malformed.
func decodeURI(s string, keep string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '%' {
			b.WriteByte(s[i])
			i++
			continue
		}
		first, ok := hexByte(s, i)
		if !ok {
			return "", false
		}
		if first < 0x80 {
			if strings.IndexByte(keep, first) >= 0 {
				b.WriteString(s[i : i+3])
			} else {
				b.WriteByte(first)
			}
			i += 3
			continue
		}
		n := 0
		switch {
		case first&0xE0 == 0xC0:
			n = 2
		case first&0xF0 == 0xE0:
			n = 3
		case first&0xF8 == 0xF0:
			n = 4
		default:
			return "", false
		}
		buf := []byte{first}
		j := i + 3
		for k := 1; k < n; k++ {
			if j >= len(s) || s[j] != '%' {
				return "", false
			}
			c, ok := hexByte(s, j)
			if !ok || c&0xC0 != 0x80 {
				return "", false
			}
			buf = append(buf, c)
			j += 3
		}
		if _, size := utf8.DecodeRune(buf); !utf8.Valid(buf) || size != n {
			return "", false
		}
		b.Write(buf)
		i = j
	}
	return b.String(), true
}

// hexByte reads the escape %XX at s[i:].
func hexByte(s string, i int) (byte, bool) {
	if i+2 >= len(s) {
		return 0, false
	}
	h, l := digitValue(rune(s[i+1])), digitValue(rune(s[i+2]))
	if h < 0 || l < 0 {
		return 0, false
	}
	return byte(h<<4 | l), true
}
