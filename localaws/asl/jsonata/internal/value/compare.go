package value

import (
	"cmp"
	"unicode/utf8"
)

// CompareStrings orders two strings as JavaScript's < does: by UTF-16 code units. That is the order of code points,
// except that a character above U+FFFF (two surrogates, from U+D800) sorts before U+E000–U+FFFF.
func CompareStrings(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) {
		return cmp.Compare(len(a), len(b))
	}
	for i > 0 && a[i]&0xC0 == 0x80 { // back to the start of the character both strings hold different bytes of
		i--
	}
	ra, _ := utf8.DecodeRuneInString(a[i:])
	rb, _ := utf8.DecodeRuneInString(b[i:])
	if ra == rb { // invalid UTF-8 on both sides
		return cmp.Compare(a[i:], b[i:])
	}
	if ka, kb := firstUnit(ra), firstUnit(rb); ka != kb {
		return cmp.Compare(ka, kb)
	}
	return cmp.Compare(ra, rb) // the same high surrogate: the low ones follow the code points
}

// firstUnit is the first UTF-16 code unit of a character.
func firstUnit(r rune) rune {
	if r >= 0x10000 {
		return 0xD800 + (r-0x10000)>>10
	}
	return r
}
