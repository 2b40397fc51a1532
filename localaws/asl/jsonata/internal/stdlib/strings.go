package stdlib

import (
	"encoding/base64"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// fnSubstring is $substring(str, start, length), counting in characters (code points), as JSONata does; a negative
// start counts from the end.
func fnSubstring(_ value.Context, args []any) (any, error) {
	s, ok := arg(args, 0).(string)
	if !ok {
		return nil, nil
	}
	start, _ := arg(args, 1).(float64)
	runes := []rune(s)
	n := float64(len(runes))
	if n+start < 0 {
		start = 0
	}
	end := n
	if l, ok := arg(args, 2).(float64); ok {
		if !(l > 0) {
			return "", nil
		}
		if start >= 0 {
			end = start + l
		} else {
			end = n + start + l
		}
	}
	return string(runes[sliceIndex(start, n):max(sliceIndex(start, n), sliceIndex(end, n))]), nil
}

// sliceIndex is JavaScript's Array.prototype.slice index: truncated, counted from the end when negative, clamped
// to [0, n].
func sliceIndex(i, n float64) int {
	if i != i {
		return 0
	}
	i = math.Trunc(i)
	if i < 0 {
		i = math.Max(0, n+i)
	}
	return int(math.Min(i, n))
}

// fnSubstringBefore is $substringBefore(str, chars): str itself when chars does not occur.
func fnSubstringBefore(_ value.Context, args []any) (any, error) {
	s, ok := arg(args, 0).(string)
	if !ok {
		return nil, nil
	}
	chars, _ := arg(args, 1).(string)
	if i := strings.Index(s, chars); i >= 0 {
		return s[:i], nil
	}
	return s, nil
}

// fnSubstringAfter is $substringAfter(str, chars): str itself when chars does not occur.
func fnSubstringAfter(_ value.Context, args []any) (any, error) {
	s, ok := arg(args, 0).(string)
	if !ok {
		return nil, nil
	}
	chars, _ := arg(args, 1).(string)
	if i := strings.Index(s, chars); i >= 0 {
		return s[i+len(chars):], nil
	}
	return s, nil
}

// fnLowercase is $lowercase(str).
func fnLowercase(_ value.Context, args []any) (any, error) {
	s, ok := arg(args, 0).(string)
	if !ok {
		return nil, nil
	}
	return toLower(s), nil
}

// fnUppercase is $uppercase(str), with JavaScript's special casings (ß to SS).
func fnUppercase(_ value.Context, args []any) (any, error) {
	s, ok := arg(args, 0).(string)
	if !ok {
		return nil, nil
	}
	return toUpper(s), nil
}

// fnLength is $length(str): the number of characters (code points).
func fnLength(_ value.Context, args []any) (any, error) {
	s, ok := arg(args, 0).(string)
	if !ok {
		return nil, nil
	}
	return float64(utf8.RuneCountInString(s)), nil
}

// fnTrim is $trim(str): runs of spaces, tabs, carriage returns and line feeds become one space, and a leading or
// trailing space goes.
func fnTrim(_ value.Context, args []any) (any, error) {
	s, ok := arg(args, 0).(string)
	if !ok {
		return nil, nil
	}
	var b strings.Builder
	blank := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\r':
			blank = true
		default:
			if blank && b.Len() > 0 {
				b.WriteByte(' ')
			}
			blank = false
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// fnPad is $pad(str, width, char): padded with char (a space by default) to |width| characters, on the right for
// a positive width and on the left for a negative one.
func fnPad(_ value.Context, args []any) (any, error) {
	s, ok := arg(args, 0).(string)
	if !ok {
		return nil, nil
	}
	width, _ := arg(args, 1).(float64)
	char, _ := arg(args, 2).(string)
	if char == "" {
		char = " "
	}
	missing := math.Abs(width) - float64(utf8.RuneCountInString(s))
	if !(missing > 0) {
		return s, nil
	}
	// A fractional shortfall is a RangeError in JavaScript; it is rounded down here.
	count := math.Floor(missing)
	if count*float64(len(char)) > maxStringBytes {
		return nil, ErrTooLarge
	}
	padRunes := []rune(char)
	var pb strings.Builder
	pb.Grow(int(count) * len(char))
	for i := 0; i < int(count); i++ {
		pb.WriteRune(padRunes[i%len(padRunes)])
	}
	padding := pb.String()
	if width > 0 {
		return s + padding, nil
	}
	return padding + s, nil
}

// fnJoin is $join(strings, separator).
func fnJoin(_ value.Context, args []any) (any, error) {
	v := arg(args, 0)
	if v == nil {
		return nil, nil
	}
	sep, _ := arg(args, 1).(string)
	xs := items(v)
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i], _ = x.(string)
	}
	return strings.Join(parts, sep), nil
}

// fnBase64Encode is $base64encode(str): the string's UTF-8 bytes in standard base64 with padding.
func fnBase64Encode(_ value.Context, args []any) (any, error) {
	s, ok := arg(args, 0).(string)
	if !ok {
		return nil, nil
	}
	return base64.StdEncoding.EncodeToString([]byte(s)), nil
}

// fnBase64Decode is $base64decode(str): read leniently, as Node's Buffer does (characters outside the alphabet
// skipped, padding optional, the URL-safe alphabet accepted), and the bytes read as UTF-8.
func fnBase64Decode(_ value.Context, args []any) (any, error) {
	s, ok := arg(args, 0).(string)
	if !ok {
		return nil, nil
	}
	clean := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/':
			clean = append(clean, c)
		case c == '-':
			clean = append(clean, '+')
		case c == '_':
			clean = append(clean, '/')
		case c == '=':
			i = len(s) // padding ends the data
		}
	}
	if len(clean)%4 == 1 {
		clean = clean[:len(clean)-1] // a lone trailing character carries no whole byte
	}
	out, err := base64.RawStdEncoding.DecodeString(string(clean))
	if err != nil {
		return "", nil // not reached: the input has been cleaned to what the decoder accepts
	}
	return strings.ToValidUTF8(string(out), "\uFFFD"), nil
}
