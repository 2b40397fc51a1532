package format

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// $formatNumber (XPath F&O 3.1, 4.7, fn:format-number) as JSONata writes numbers with it, including the places
// where JSONata's reading of the specification is its own (a sub-picture without a decimal separator takes its
// suffix as its fractional part; the fractional part's further grouping separators are looked for in the integer
// part), since AWS's answers are JSONata's.

// decimalFormat is the decimal format: the characters of the picture and of the result, JSONata's defaults
// overridden by the options argument.
type decimalFormat struct {
	decimal, grouping, exponent, infinity, minus, nan, percent, perMille, zero, digit, pattern string
	// family is the ten digits from the zero digit on.
	family []rune
}

// newDecimalFormat applies the options object to the defaults.
func newDecimalFormat(options *value.Object) (*decimalFormat, error) {
	f := &decimalFormat{decimal: ".", grouping: ",", exponent: "e", infinity: "Infinity", minus: "-", nan: "NaN",
		percent: "%", perMille: "\u2030", zero: "0", digit: "#", pattern: ";"}
	if options != nil {
		fields := map[string]*string{"decimal-separator": &f.decimal, "grouping-separator": &f.grouping,
			"exponent-separator": &f.exponent, "infinity": &f.infinity, "minus-sign": &f.minus, "NaN": &f.nan,
			"percent": &f.percent, "per-mille": &f.perMille, "zero-digit": &f.zero, "digit": &f.digit,
			"pattern-separator": &f.pattern}
		for i, k := range options.Keys() {
			field, ok := fields[k]
			if !ok {
				continue
			}
			s, ok := options.Values()[i].(string)
			if !ok {
				return nil, errors.New("$formatNumber: the option " + strconv.Quote(k) + " must be a string")
			}
			*field = s
		}
	}
	zero := rune(0)
	if r := []rune(f.zero); len(r) > 0 {
		zero = r[0]
	}
	for i := range rune(10) {
		f.family = append(f.family, zero+i)
	}
	return f, nil
}

// isDigit reports whether r is one of the digit family.
func (f *decimalFormat) isDigit(r rune) bool { return slices.Contains(f.family, r) }

// isDigitSign reports whether r is a digit of the family or the optional digit sign.
func (f *decimalFormat) isDigitSign(r rune) bool { return f.isDigit(r) || string(r) == f.digit }

// isActive reports whether r is an active character of a picture (a digit, or a separator or sign of the format).
func (f *decimalFormat) isActive(r rune) bool {
	s := string(r)
	return f.isDigit(r) || s == f.decimal || s == f.exponent || s == f.grouping || s == f.digit || s == f.pattern
}

// subPicture is a sub-picture split into its parts (XPath F&O 4.7.3), as rune slices.
type subPicture struct {
	whole, prefix, suffix, active, mantissa, integer, fraction []rune
	exponent                                                   []rune
	hasExponent                                                bool
}

// numberPicture is an analysed sub-picture (XPath F&O 4.7.4).
type numberPicture struct {
	prefix, suffix                   string
	whole                            []rune
	integerGroups, fractionGroups    []int
	regular                          int
	minInteger, scaling              int
	minFraction, maxFraction, minExp int
	hasExponent                      bool
}

func formatNumberImpl(_ value.Context, args []any) (any, error) {
	n, picture, _, ok, err := pictureArgs[float64](args)
	if err != nil || !ok {
		return nil, err
	}
	options, _, err := typedArg[*value.Object](args, 2)
	if err != nil {
		return nil, err
	}
	f, err := newDecimalFormat(options)
	if err != nil {
		return nil, err
	}
	return f.formatNumber(n, picture)
}

// formatNumber writes n as the picture says.
func (f *decimalFormat) formatNumber(n float64, picture string) (string, error) {
	subs := strings.Split(picture, f.pattern)
	if len(subs) == 0 { // an empty picture split by an empty pattern separator
		return "", &value.Error{Code: "D3085"}
	}
	if len(subs) > 2 {
		return "", &value.Error{Code: "D3080"}
	}
	pics := make([]*numberPicture, 0, 2)
	for _, s := range subs {
		parts := f.split([]rune(s))
		if err := f.validate(parts); err != nil {
			return "", err
		}
		pics = append(pics, f.analyse(parts))
	}
	if len(pics) == 1 {
		neg := *pics[0]
		neg.prefix = f.minus + neg.prefix
		pics = append(pics, &neg)
	}
	pic := pics[0]
	if !(n >= 0) {
		pic = pics[1]
	}
	if math.IsNaN(n) {
		return f.nan, nil
	}
	adjusted := n
	switch {
	case runeIndex(pic.whole, f.percent, 0) >= 0:
		adjusted = n * 100
	case runeIndex(pic.whole, f.perMille, 0) >= 0:
		adjusted = n * 1000
	}
	if math.IsInf(adjusted, 0) {
		return pic.prefix + f.infinity + pic.suffix, nil
	}
	mantissa, exponent := adjusted, 0
	if pic.minExp > 0 {
		// mantissa × 10^exponent = the number, the mantissa's integer part having as many digits as the picture's
		// mandatory integer digits. (JSONata scales the signed number, which never ends for zero or a negative
		// number; the magnitude is scaled here.)
		mantissa = math.Abs(adjusted)
		if mantissa != 0 {
			lo, hi := math.Pow(10, float64(pic.scaling-1)), math.Pow(10, float64(pic.scaling))
			for mantissa < lo {
				mantissa *= 10
				exponent--
			}
			for mantissa > hi {
				mantissa /= 10
				exponent++
			}
		}
	}
	if pic.maxFraction > 100 {
		// JavaScript's toFixed, which JSONata writes the digits with, refuses more.
		return "", errors.New("$formatNumber: a picture with more than 100 fractional digits is not supported")
	}
	rounded := roundHalfEven(mantissa, pic.maxFraction)
	s := []rune(f.digits(rounded, pic.maxFraction))
	dec := []rune(f.decimal)
	if i := slices.Index(s, '.'); i < 0 {
		s = append(s, dec...)
	} else {
		s = slices.Concat(s[:i], dec, s[i+1:])
	}
	if z := []rune(f.zero); len(z) == 1 {
		for len(s) > 0 && s[0] == z[0] {
			s = s[1:]
		}
		for len(s) > 0 && s[len(s)-1] == z[0] {
			s = s[:len(s)-1]
		}
	}
	pos := runeIndex(s, f.decimal, 0)
	padLeft, padRight := pic.minInteger-pos, pic.minFraction-(len(s)-pos-1)
	if padLeft > 0 {
		s = append([]rune(strings.Repeat(f.zero, padLeft)), s...)
	}
	if padRight > 0 {
		s = append(s, []rune(strings.Repeat(f.zero, padRight))...)
	}
	pos = runeIndex(s, f.decimal, 0)
	group := []rune(f.grouping)
	if pic.regular > 0 {
		for g := 1; g <= (pos-1)/pic.regular; g++ {
			s = insertAt(s, pos-g*pic.regular, group)
		}
	} else {
		for _, g := range pic.integerGroups {
			s = insertAt(s, pos-g, group)
			pos++
		}
	}
	pos = runeIndex(s, f.decimal, 0)
	for _, g := range pic.fractionGroups {
		s = insertAt(s, g+pos+1, group)
	}
	pos = runeIndex(s, f.decimal, 0)
	if (runeIndex(pic.whole, f.decimal, 0) < 0 || pos == len(s)-1) && len(s) > 0 {
		s = s[:len(s)-1]
	}
	out := string(s)
	if pic.minExp > 0 {
		e := f.digits(float64(exponent), 0)
		if pad := pic.minExp - len([]rune(e)); pad > 0 {
			e = strings.Repeat(f.zero, pad) + e
		}
		sign := ""
		if exponent < 0 {
			sign = f.minus
		}
		out += f.exponent + sign + e
	}
	return pic.prefix + out + pic.suffix, nil
}

// digits writes |v| with places decimals (JavaScript's toFixed: its exponent form from 1e21 on), in the family's
// digits.
func (f *decimalFormat) digits(v float64, places int) string {
	v = math.Abs(v)
	var s string
	if v >= 1e21 {
		s = value.NumberText(v)
	} else {
		s = strconv.FormatFloat(v, 'f', places, 64)
	}
	if f.family[0] == '0' {
		return s
	}
	r := []rune(s)
	for i, c := range r {
		if c >= '0' && c <= '9' {
			r[i] = f.family[c-'0']
		}
	}
	return string(r)
}

// insertAt inserts ins into s at index i, counted from the end when negative (JavaScript's slice), within bounds.
func insertAt(s []rune, i int, ins []rune) []rune {
	if i < 0 {
		i = max(len(s)+i, 0)
	}
	i = min(i, len(s))
	return slices.Concat(s[:i], ins, s[i:])
}

// runeIndex returns the index (in runes) of the first sub at or after from in s, or -1 (-1 for an empty sub too,
// which no check of a picture looks for).
func runeIndex(s []rune, sub string, from int) int {
	r := []rune(sub)
	if len(r) == 0 {
		return -1
	}
	for i := max(from, 0); i+len(r) <= len(s); i++ {
		if slices.Equal(s[i:i+len(r)], r) {
			return i
		}
	}
	return -1
}

// runeLastIndex returns the index of the last sub in s, or -1.
func runeLastIndex(s []rune, sub string) int {
	r := []rune(sub)
	if len(r) == 0 {
		return -1
	}
	for i := len(s) - len(r); i >= 0; i-- {
		if slices.Equal(s[i:i+len(r)], r) {
			return i
		}
	}
	return -1
}

// clampSlice is s[from:to] with the bounds clamped to s (JavaScript's substring).
func clampSlice(s []rune, from, to int) []rune {
	from = min(max(from, 0), len(s))
	to = min(max(to, 0), len(s))
	if from > to {
		from, to = to, from
	}
	return s[from:to]
}

// split divides a sub-picture into prefix, active part and suffix, and the active part into mantissa (integer and
// fractional parts) and exponent.
func (f *decimalFormat) split(sub []rune) *subPicture {
	p := &subPicture{whole: sub}
	first, last := -1, -1
	for i, r := range sub {
		if f.isActive(r) && string(r) != f.exponent {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		p.prefix = sub
		return p
	}
	p.prefix, p.suffix = sub[:first], sub[last+1:]
	p.active = sub[first : last+1]
	p.mantissa = p.active
	if e := runeIndex(sub, f.exponent, len(p.prefix)); e >= 0 && e <= len(sub)-len(p.suffix) {
		// JSONata cuts the active part at the exponent separator's index in the whole sub-picture.
		p.mantissa = clampSlice(p.active, 0, e)
		p.exponent = clampSlice(p.active, e+1, len(p.active))
		p.hasExponent = true
	}
	if d := runeIndex(p.mantissa, f.decimal, 0); d >= 0 {
		p.integer, p.fraction = p.mantissa[:d], p.mantissa[d+len([]rune(f.decimal)):]
	} else {
		p.integer, p.fraction = p.mantissa, p.suffix
	}
	return p
}

// validate applies the rules of XPath F&O 4.7.3 to a sub-picture; when several are broken, the error is the last
// one's, as JSONata reports it.
func (f *decimalFormat) validate(p *subPicture) error {
	code := ""
	w := p.whole
	decimalAt := runeIndex(w, f.decimal, 0)
	if decimalAt != runeLastIndex(w, f.decimal) {
		code = "D3081"
	}
	if runeIndex(w, f.percent, 0) != runeLastIndex(w, f.percent) {
		code = "D3082"
	}
	if runeIndex(w, f.perMille, 0) != runeLastIndex(w, f.perMille) {
		code = "D3083"
	}
	hasPercent, hasPerMille := runeIndex(w, f.percent, 0) >= 0, runeIndex(w, f.perMille, 0) >= 0
	if hasPercent && hasPerMille {
		code = "D3084"
	}
	if !slices.ContainsFunc(p.mantissa, f.isDigitSign) {
		code = "D3085"
	}
	if slices.ContainsFunc(p.active, func(r rune) bool { return !f.isActive(r) }) {
		code = "D3086"
	}
	isGrouping := func(i int) bool { return i >= 0 && i < len(w) && string(w[i]) == f.grouping }
	if decimalAt >= 0 {
		if isGrouping(decimalAt-1) || isGrouping(decimalAt+1) {
			code = "D3087"
		}
	} else if n := len(p.integer); n > 0 && string(p.integer[n-1]) == f.grouping {
		code = "D3088"
	}
	if runeIndex(w, f.grouping+f.grouping, 0) >= 0 {
		code = "D3089"
	}
	if i := runeIndex(p.integer, f.digit, 0); i >= 0 && slices.ContainsFunc(p.integer[:i], f.isDigit) {
		code = "D3090"
	}
	if i := runeLastIndex(p.fraction, f.digit); i >= 0 && slices.ContainsFunc(p.fraction[i:], f.isDigit) {
		code = "D3091"
	}
	if p.hasExponent && len(p.exponent) > 0 && (hasPercent || hasPerMille) {
		code = "D3092"
	}
	if p.hasExponent && (len(p.exponent) == 0 || slices.ContainsFunc(p.exponent, func(r rune) bool { return !f.isDigit(r) })) {
		code = "D3093"
	}
	if code != "" {
		return &value.Error{Code: code}
	}
	return nil
}

// analyse computes the grouping positions and the minimum and maximum sizes of a valid sub-picture.
func (f *decimalFormat) analyse(p *subPicture) *numberPicture {
	count := func(s []rune, pred func(rune) bool) int {
		n := 0
		for _, r := range s {
			if pred(r) {
				n++
			}
		}
		return n
	}
	a := &numberPicture{prefix: string(p.prefix), suffix: string(p.suffix), whole: p.whole, hasExponent: p.hasExponent}
	// A grouping separator of the integer part is at the number of digit signs to its right.
	for i := runeIndex(p.integer, f.grouping, 0); i >= 0; i = runeIndex(p.integer, f.grouping, i+1) {
		a.integerGroups = append(a.integerGroups, count(p.integer[i:], f.isDigitSign))
	}
	// One of the fractional part at the number to its left; JSONata looks for the next ones in the integer part.
	for i := runeIndex(p.fraction, f.grouping, 0); i >= 0; i = runeIndex(p.integer, f.grouping, i+1) {
		a.fractionGroups = append(a.fractionGroups, count(clampSlice(p.fraction, 0, i), f.isDigitSign))
	}
	a.regular = regularInterval(a.integerGroups)
	a.minInteger = count(p.integer, f.isDigit)
	a.scaling = a.minInteger
	a.minFraction = count(p.fraction, f.isDigit)
	a.maxFraction = count(p.fraction, f.isDigitSign)
	if a.minInteger == 0 && a.maxFraction == 0 {
		if p.hasExponent {
			a.minFraction, a.maxFraction = 1, 1
		} else {
			a.minInteger = 1
		}
	}
	if p.hasExponent && a.minInteger == 0 && runeIndex(p.integer, f.digit, 0) >= 0 {
		a.minInteger = 1
	}
	if a.minInteger == 0 && a.minFraction == 0 {
		a.minFraction = 1
	}
	if p.hasExponent {
		a.minExp = count(p.exponent, f.isDigit)
	}
	return a
}

// regularInterval returns the interval of grouping positions that are its first multiples (3 for 3 and 6), or 0.
func regularInterval(positions []int) int {
	if len(positions) == 0 {
		return 0
	}
	g := 0
	for _, p := range positions {
		g = gcd(g, p)
	}
	for k := 1; k <= len(positions); k++ {
		if !slices.Contains(positions, k*g) {
			return 0
		}
	}
	return g
}
