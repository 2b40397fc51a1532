package stdlib

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// upperSpecial are the characters whose uppercase is more than one character (Unicode's SpecialCasing, which
// JavaScript's toUpperCase applies and Go's simple case mapping does not): ß is SS, the ligature ﬁ is FI, and so on.
var upperSpecial = map[rune]string{
	0xDF:   "\u0053\u0053",
	0x149:  "\u02BC\u004E",
	0x1F0:  "\u004A\u030C",
	0x390:  "\u0399\u0308\u0301",
	0x3B0:  "\u03A5\u0308\u0301",
	0x587:  "\u0535\u0552",
	0x1E96: "\u0048\u0331",
	0x1E97: "\u0054\u0308",
	0x1E98: "\u0057\u030A",
	0x1E99: "\u0059\u030A",
	0x1E9A: "\u0041\u02BE",
	0x1F50: "\u03A5\u0313",
	0x1F52: "\u03A5\u0313\u0300",
	0x1F54: "\u03A5\u0313\u0301",
	0x1F56: "\u03A5\u0313\u0342",
	0x1F80: "\u1F08\u0399",
	0x1F81: "\u1F09\u0399",
	0x1F82: "\u1F0A\u0399",
	0x1F83: "\u1F0B\u0399",
	0x1F84: "\u1F0C\u0399",
	0x1F85: "\u1F0D\u0399",
	0x1F86: "\u1F0E\u0399",
	0x1F87: "\u1F0F\u0399",
	0x1F88: "\u1F08\u0399",
	0x1F89: "\u1F09\u0399",
	0x1F8A: "\u1F0A\u0399",
	0x1F8B: "\u1F0B\u0399",
	0x1F8C: "\u1F0C\u0399",
	0x1F8D: "\u1F0D\u0399",
	0x1F8E: "\u1F0E\u0399",
	0x1F8F: "\u1F0F\u0399",
	0x1F90: "\u1F28\u0399",
	0x1F91: "\u1F29\u0399",
	0x1F92: "\u1F2A\u0399",
	0x1F93: "\u1F2B\u0399",
	0x1F94: "\u1F2C\u0399",
	0x1F95: "\u1F2D\u0399",
	0x1F96: "\u1F2E\u0399",
	0x1F97: "\u1F2F\u0399",
	0x1F98: "\u1F28\u0399",
	0x1F99: "\u1F29\u0399",
	0x1F9A: "\u1F2A\u0399",
	0x1F9B: "\u1F2B\u0399",
	0x1F9C: "\u1F2C\u0399",
	0x1F9D: "\u1F2D\u0399",
	0x1F9E: "\u1F2E\u0399",
	0x1F9F: "\u1F2F\u0399",
	0x1FA0: "\u1F68\u0399",
	0x1FA1: "\u1F69\u0399",
	0x1FA2: "\u1F6A\u0399",
	0x1FA3: "\u1F6B\u0399",
	0x1FA4: "\u1F6C\u0399",
	0x1FA5: "\u1F6D\u0399",
	0x1FA6: "\u1F6E\u0399",
	0x1FA7: "\u1F6F\u0399",
	0x1FA8: "\u1F68\u0399",
	0x1FA9: "\u1F69\u0399",
	0x1FAA: "\u1F6A\u0399",
	0x1FAB: "\u1F6B\u0399",
	0x1FAC: "\u1F6C\u0399",
	0x1FAD: "\u1F6D\u0399",
	0x1FAE: "\u1F6E\u0399",
	0x1FAF: "\u1F6F\u0399",
	0x1FB2: "\u1FBA\u0399",
	0x1FB3: "\u0391\u0399",
	0x1FB4: "\u0386\u0399",
	0x1FB6: "\u0391\u0342",
	0x1FB7: "\u0391\u0342\u0399",
	0x1FBC: "\u0391\u0399",
	0x1FC2: "\u1FCA\u0399",
	0x1FC3: "\u0397\u0399",
	0x1FC4: "\u0389\u0399",
	0x1FC6: "\u0397\u0342",
	0x1FC7: "\u0397\u0342\u0399",
	0x1FCC: "\u0397\u0399",
	0x1FD2: "\u0399\u0308\u0300",
	0x1FD3: "\u0399\u0308\u0301",
	0x1FD6: "\u0399\u0342",
	0x1FD7: "\u0399\u0308\u0342",
	0x1FE2: "\u03A5\u0308\u0300",
	0x1FE3: "\u03A5\u0308\u0301",
	0x1FE4: "\u03A1\u0313",
	0x1FE6: "\u03A5\u0342",
	0x1FE7: "\u03A5\u0308\u0342",
	0x1FF2: "\u1FFA\u0399",
	0x1FF3: "\u03A9\u0399",
	0x1FF4: "\u038F\u0399",
	0x1FF6: "\u03A9\u0342",
	0x1FF7: "\u03A9\u0342\u0399",
	0x1FFC: "\u03A9\u0399",
	0xFB00: "\u0046\u0046",
	0xFB01: "\u0046\u0049",
	0xFB02: "\u0046\u004C",
	0xFB03: "\u0046\u0046\u0049",
	0xFB04: "\u0046\u0046\u004C",
	0xFB05: "\u0053\u0054",
	0xFB06: "\u0053\u0054",
	0xFB13: "\u0544\u0546",
	0xFB14: "\u0544\u0535",
	0xFB15: "\u0544\u053B",
	0xFB16: "\u054E\u0546",
	0xFB17: "\u0544\u053D",
}

// toUpper is JavaScript's String.prototype.toUpperCase.
func toUpper(s string) string {
	special := false
	for _, r := range s {
		if _, ok := upperSpecial[r]; ok {
			special = true
			break
		}
	}
	if !special {
		return strings.ToUpper(s)
	}
	var b strings.Builder
	for _, r := range s {
		if u, ok := upperSpecial[r]; ok {
			b.WriteString(u)
		} else {
			b.WriteRune(unicode.ToUpper(r))
		}
	}
	return b.String()
}

// toLower is JavaScript's String.prototype.toLowerCase: Go's mapping, plus the two rules of Unicode's
// SpecialCasing that apply whatever the language: İ becomes i followed by a combining dot above, and Σ at the end of
// a word becomes the final sigma ς.
func toLower(s string) string {
	if !strings.ContainsRune(s, 'Σ') && !strings.ContainsRune(s, 'İ') {
		return strings.ToLower(s)
	}
	var b strings.Builder
	for i, r := range s {
		switch r {
		case 'İ':
			b.WriteString("i\u0307")
		case 'Σ':
			if finalSigma(s, i) {
				b.WriteRune('ς')
			} else {
				b.WriteRune('σ')
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// finalSigma reports whether the Σ at byte offset i ends a word: a cased letter comes before it and none after it,
// skipping case-ignorable characters on both sides.
func finalSigma(s string, i int) bool {
	before := false
	for j := i; j > 0; {
		r, size := utf8.DecodeLastRuneInString(s[:j])
		j -= size
		if caseIgnorable(r) {
			continue
		}
		before = cased(r)
		break
	}
	if !before {
		return false
	}
	for j := i + len("Σ"); j < len(s); {
		r, size := utf8.DecodeRuneInString(s[j:])
		j += size
		if caseIgnorable(r) {
			continue
		}
		return !cased(r)
	}
	return true
}

// cased approximates Unicode's Cased property: letters with case.
func cased(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r)
}

// caseIgnorable approximates Unicode's Case_Ignorable property: marks, format characters, modifier letters and
// symbols, and the apostrophes and periods that may sit inside a word.
func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '\u00B7', '\u2018', '\u2019', '\u2024', '\u2027', '\uFE13', '\uFE52', '\uFE55', '\uFF07', '\uFF0E', '\uFF1A':
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}
