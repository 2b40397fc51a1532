// Package jsonstring writes Go strings as JSON strings, for the encoders that build JSON text by hand (the EMF
// metrics lines, the engine's JSON values) and must escape as encoding/json does.
package jsonstring

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// plain marks the ASCII bytes written as they are inside a JSON string.
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// Append appends s to b as a JSON string (RFC 8259) as encoding/json writes it without HTML escaping: quotation
// marks, backslashes and control characters escaped (\b \f \n \r \t by name), U+2028 and U+2029 escaped, invalid
// UTF-8 replaced by \ufffd. Runs of bytes that need no escape are copied at once.
func Append(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0 // s[start:i] is plain text not yet written
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
