package format

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// $formatInteger and $parseInteger (docs.jsonata.org/numeric-functions), with the picture strings of XPath F&O 3.1
// fn:format-integer (picture.go). The arithmetic on large numbers is JSONata's (doubles), so that words and letters
// come out as AWS writes them. The date-time pictures (datetime.go) format their integer components with the same
// analysed pictures.

// maxDecimal bounds the numbers written with a decimal digit pattern: JSONata writes larger ones in exponent form
// ("1e+21") and then pads or groups that text, which is not an answer.
const maxDecimal = 1e21

// maxRoman bounds the numbers written in roman numerals (a thousand is one M: a million is 1,000 of them).
const maxRoman = 1e6

// formatInteger writes the integer part (rounded down, as JSONata does) of a number as the picture says.
func formatInteger(v float64, picture string) (string, error) {
	p, err := analyseIntegerPicture(picture)
	if err != nil {
		return "", wrapError("$formatInteger", err)
	}
	s, err := p.format(v)
	if err != nil {
		return "", wrapError("$formatInteger", err)
	}
	return s, nil
}

// wrapError names the function in an error of ours; JSONata's errors (*value.Error) keep their code and message.
func wrapError(fn string, err error) error {
	var je *value.Error
	if errors.As(err, &je) {
		return je
	}
	return fmt.Errorf("%s: %w", fn, err)
}

// format writes the integer part (rounded down) of v with an analysed picture.
func (p *integerPicture) format(v float64) (string, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "", errors.New("the number is not finite")
	}
	v = math.Floor(v)
	neg := v < 0
	v = math.Abs(v)
	var s string
	switch p.kind {
	case pictureLetters:
		s = toLetters(v, p.letters)
	case pictureRoman:
		if v > maxRoman {
			return "", fmt.Errorf("%s is too large for roman numerals (at most %d here)", strconv.FormatFloat(v, 'f', -1, 64), int(maxRoman))
		}
		s = toRoman(int(v), p.letters)
	case pictureWords:
		s = toWords(v, p.ordinal, p.letters)
	case pictureSequence:
		return "", &value.Error{Code: "D3130"}
	default:
		if v >= maxDecimal {
			return "", fmt.Errorf("%s is too large for a decimal digit pattern (at most 21 digits)", strconv.FormatFloat(v, 'g', -1, 64))
		}
		s = p.formatDigits(v)
	}
	if neg {
		s = "-" + s
	}
	return s, nil
}

// formatDigits writes a non-negative integer below maxDecimal with a decimal digit pattern.
func (p *integerPicture) formatDigits(v float64) string {
	digits := []rune(strconv.FormatFloat(v, 'f', -1, 64)) // JavaScript's digits: 2^60 is 1152921504606847000
	for len(digits) < p.mandatory {
		digits = append([]rune{'0'}, digits...)
	}
	for i, d := range digits {
		digits[i] = p.zero + (d - '0')
	}
	// The separator after the digit at index i (from the left) has len(digits)-1-i digits to its right.
	sepAt := map[int]rune{}
	for _, s := range p.seps {
		if s.position < len(digits) {
			sepAt[s.position] = s.char
		}
	}
	if p.group > 0 {
		for pos := p.group; pos < len(digits); pos += p.group {
			sepAt[pos] = p.sep
		}
	}
	var b strings.Builder
	for i, d := range digits {
		b.WriteRune(d)
		if c, ok := sepAt[len(digits)-1-i]; ok {
			b.WriteRune(c)
		}
	}
	s := b.String()
	if p.ordinal {
		s += digitSuffix(s)
	}
	return s
}

// digitSuffix returns the English ordinal suffix of a number written in digits, read from its last two characters
// as JSONata does (so digits of other families always take "th").
func digitSuffix(s string) string {
	r := []rune(s)
	last := r[len(r)-1]
	if len(r) > 1 && r[len(r)-2] == '1' {
		return "th"
	}
	switch last {
	case '1':
		return "st"
	case '2':
		return "nd"
	case '3':
		return "rd"
	}
	return "th"
}

// toLetters writes n in the numbering a, b, …, z, aa, ab, … (0 is the empty string).
func toLetters(n float64, c letterCase) string {
	a := 'a'
	if c == upperCase {
		a = 'A'
	}
	var out []rune
	for n > 0 {
		out = append([]rune{a + rune(math.Mod(n-1, 26))}, out...)
		n = math.Floor((n - 1) / 26)
	}
	return string(out)
}

var romanNumerals = []struct {
	value   int
	numeral string
}{
	{1000, "m"}, {900, "cm"}, {500, "d"}, {400, "cd"}, {100, "c"}, {90, "xc"}, {50, "l"}, {40, "xl"},
	{10, "x"}, {9, "ix"}, {5, "v"}, {4, "iv"}, {1, "i"},
}

// toRoman writes n in roman numerals, thousands as repeated Ms (0 is the empty string).
func toRoman(n int, c letterCase) string {
	var b strings.Builder
	for _, r := range romanNumerals {
		for n >= r.value {
			b.WriteString(r.numeral)
			n -= r.value
		}
	}
	if c == upperCase {
		return strings.ToUpper(b.String())
	}
	return b.String()
}

// English number words, in title case as JSONata keeps them ("Ww"); "w" and "W" change the case of the whole.
var (
	unitWords    = [20]string{"Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten", "Eleven", "Twelve", "Thirteen", "Fourteen", "Fifteen", "Sixteen", "Seventeen", "Eighteen", "Nineteen"}
	unitOrdinals = [20]string{"Zeroth", "First", "Second", "Third", "Fourth", "Fifth", "Sixth", "Seventh", "Eighth", "Ninth", "Tenth", "Eleventh", "Twelfth", "Thirteenth", "Fourteenth", "Fifteenth", "Sixteenth", "Seventeenth", "Eighteenth", "Nineteenth"}
	tensWords    = [10]string{2: "Twenty", 3: "Thirty", 4: "Forty", 5: "Fifty", 6: "Sixty", 7: "Seventy", 8: "Eighty", 9: "Ninety"}
	// scaleWords are the powers of a thousand; above a trillion, JSONata repeats "Trillion" (a thousand trillion).
	scaleWords = []struct {
		value float64
		word  string
	}{{1e12, "Trillion"}, {1e9, "Billion"}, {1e6, "Million"}, {1e3, "Thousand"}}
)

// toWords writes a non-negative integer in English words: "two thousand, seven hundred and eighty-nine",
// "twenty-first" (ordinal).
func toWords(n float64, ordinal bool, c letterCase) string {
	var b strings.Builder
	writeWords(&b, n, false, ordinal)
	switch c {
	case lowerCase:
		return strings.ToLower(b.String())
	case upperCase:
		return strings.ToUpper(b.String())
	}
	return b.String()
}

// writeWords writes n; after is set when n is the rest of a larger number ("one thousand, two hundred",
// "one hundred and two"). The arithmetic is in doubles, as JSONata's.
func writeWords(b *strings.Builder, n float64, after, ordinal bool) {
	switch {
	case n < 20:
		if after {
			b.WriteString(" and ")
		}
		if ordinal {
			b.WriteString(unitOrdinals[int(n)])
		} else {
			b.WriteString(unitWords[int(n)])
		}
	case n < 100:
		if after {
			b.WriteString(" and ")
		}
		tens, rest := int(n)/10, int(n)%10
		switch {
		case rest > 0:
			b.WriteString(tensWords[tens])
			b.WriteString("-")
			writeWords(b, float64(rest), false, ordinal)
		case ordinal: // Twenty → Twentieth
			b.WriteString(strings.TrimSuffix(tensWords[tens], "y") + "ieth")
		default:
			b.WriteString(tensWords[tens])
		}
	case n < 1000:
		if after {
			b.WriteString(", ")
		}
		b.WriteString(unitWords[int(n)/100])
		b.WriteString(" Hundred")
		if rest := int(n) % 100; rest > 0 {
			writeWords(b, float64(rest), true, ordinal)
		} else if ordinal {
			b.WriteString("th")
		}
	default:
		scale := scaleWords[len(scaleWords)-1]
		for _, s := range scaleWords {
			if n >= s.value {
				scale = s
				break
			}
		}
		if after {
			b.WriteString(", ")
		}
		count := math.Floor(n / scale.value)
		writeWords(b, count, false, false)
		b.WriteString(" ")
		b.WriteString(scale.word)
		if rest := n - count*scale.value; rest > 0 {
			writeWords(b, rest, true, ordinal)
		} else if ordinal {
			b.WriteString("th")
		}
	}
}

// parseInteger reads an integer written as the picture says; a leading "-" makes it negative. Text that the
// picture cannot have written is an error (JSONata's own reading does not check, and answers NaN or a number read
// from a prefix).
func parseInteger(text, picture string) (float64, error) {
	p, err := analyseIntegerPicture(picture)
	if err != nil {
		return 0, wrapError("$parseInteger", err)
	}
	s, neg := strings.CutPrefix(text, "-")
	var v float64
	switch p.kind {
	case pictureLetters:
		v, err = fromLetters(s, p.letters)
	case pictureRoman:
		v, err = fromRoman(s, p.letters)
	case pictureWords:
		v, err = fromWords(s)
	default:
		v, err = p.parseDigits(s)
	}
	if err != nil {
		return 0, fmt.Errorf("$parseInteger: %q does not match the picture %q: %w", text, picture, err)
	}
	if neg && v != 0 {
		v = -v
	}
	return v, nil
}

// parseDigits reads digits of the pattern's family; the pattern's grouping separators may come between digits,
// and an ordinal pattern's number ends with st, nd, rd or th.
func (p *integerPicture) parseDigits(s string) (float64, error) {
	if p.ordinal {
		n := len(s)
		if n < 2 {
			return 0, errors.New("an ordinal number ends with st, nd, rd or th")
		}
		switch s[n-2:] {
		case "st", "nd", "rd", "th":
			s = s[:n-2]
		default:
			return 0, errors.New("an ordinal number ends with st, nd, rd or th")
		}
	}
	isSep := func(r rune) bool {
		if p.group > 0 {
			return r == p.sep
		}
		for _, sp := range p.seps {
			if r == sp.char {
				return true
			}
		}
		return false
	}
	var digits []byte
	runes := []rune(s)
	for i, r := range runes {
		switch {
		case r >= p.zero && r <= p.zero+9:
			digits = append(digits, byte('0'+r-p.zero))
		case isSep(r) && i > 0 && i < len(runes)-1 && !isSep(runes[i-1]):
		default:
			return 0, fmt.Errorf("unexpected %q", r)
		}
	}
	if len(digits) == 0 {
		return 0, errors.New("no digits")
	}
	return strconv.ParseFloat(string(digits), 64)
}

// fromLetters reads the numbering a, b, …, z, aa, …, in the case of the picture (the empty string is 0).
func fromLetters(s string, c letterCase) (float64, error) {
	a := 'a'
	if c == upperCase {
		a = 'A'
	}
	var v float64
	for _, r := range s {
		if r < a || r > a+25 {
			return 0, fmt.Errorf("unexpected %q", r)
		}
		v = v*26 + float64(r-a+1)
	}
	return v, nil
}

var romanValues = map[rune]int{'I': 1, 'V': 5, 'X': 10, 'L': 50, 'C': 100, 'D': 500, 'M': 1000}

// fromRoman reads roman numerals: upper case for "I", either case for "i" (as JSONata). A numeral smaller than one
// to its right is subtracted (IV, XC); the empty string is 0.
func fromRoman(s string, c letterCase) (float64, error) {
	if c != upperCase {
		s = strings.ToUpper(s)
	}
	runes := []rune(s)
	for _, r := range runes {
		if _, ok := romanValues[r]; !ok {
			return 0, fmt.Errorf("unexpected %q", r)
		}
	}
	total, largest := 0, 0
	for i := len(runes) - 1; i >= 0; i-- {
		v := romanValues[runes[i]]
		if v < largest {
			total -= v
		} else {
			largest = v
			total += v
		}
	}
	if total < 0 {
		return 0, errors.New("not a roman number")
	}
	return float64(total), nil
}

// wordValues are the numbers of the English number words, cardinal and ordinal, in lower case.
var wordValues = func() map[string]float64 {
	m := map[string]float64{"hundred": 100, "hundredth": 100}
	for i := range unitWords {
		m[strings.ToLower(unitWords[i])] = float64(i)
		m[strings.ToLower(unitOrdinals[i])] = float64(i)
	}
	for i, w := range tensWords {
		if w != "" {
			w = strings.ToLower(w)
			m[w] = float64(i * 10)
			m[strings.TrimSuffix(w, "y")+"ieth"] = float64(i * 10)
		}
	}
	for _, s := range scaleWords {
		w := strings.ToLower(s.word)
		m[w], m[w+"th"] = s.value, s.value
	}
	return m
}()

// fromWords reads English number words in any case, separated by spaces, hyphens and commas, "and" ignored. Numbers
// below a hundred add up, "hundred" multiplies the number before it, and a scale (thousand, million, billion,
// trillion) multiplies the words before it back to the last larger scale: "three hundred and twenty-seven
// thousand, seven hundred" is 327,700, "one thousand and one trillion" 1,001 trillions (JSONata multiplies the last
// group only, so it reads the latter as one thousand plus one trillion), and a trillion after a trillion multiplies
// again ("ten billion trillion trillion").
func fromWords(s string) (float64, error) {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return r == ',' || r == '-' || unicode.IsSpace(r)
	})
	var groups []float64
	var last float64 // the value of the previous word
	for _, w := range words {
		if w == "and" {
			continue
		}
		v, ok := wordValues[w]
		if !ok {
			return 0, fmt.Errorf("%q is not a number word", w)
		}
		n := len(groups)
		switch {
		case v == 1e12 && last == 1e12:
			groups[n-1] *= v
		case v >= 1000:
			var count float64
			k := n
			for k > 0 && groups[k-1] < v {
				k--
				count += groups[k]
			}
			if k == n {
				return 0, fmt.Errorf("%q has no number before it", w)
			}
			groups = append(groups[:k], count*v)
		case v == 100:
			if n == 0 {
				return 0, fmt.Errorf("%q has no number before it", w)
			}
			groups[n-1] *= v
		case n == 0 || groups[n-1] >= 1000:
			groups = append(groups, v)
		default:
			groups[n-1] += v
		}
		last = v
	}
	if len(groups) == 0 {
		return 0, errors.New("no number words")
	}
	var total float64
	for _, g := range groups {
		total += g
	}
	return total, nil
}
