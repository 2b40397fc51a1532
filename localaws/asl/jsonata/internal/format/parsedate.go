package format

import (
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// isoTimestamp is the shape of the timestamps $toMillis reads without a picture (JSONata's test, before the
// reading proper).
var isoTimestamp = regexp.MustCompile(`^\d{4}(-[01]\d)*(-[0-3]\d)*(T[0-2]\d:[0-5]\d:[0-5]\d)*(\.\d+)?([+-][0-2]\d:?[0-5]\d|Z)?$`)

// isoParts reads the timestamps JavaScript's Date.parse accepts among those: a year, month and day, then a time
// with optional fraction and offset (UTC when there is none, as on AWS's hosts).
var isoParts = regexp.MustCompile(`^(\d{4})(?:-(\d\d)(?:-(\d\d))?)?(?:T(\d\d):(\d\d)(?::(\d\d)(?:\.(\d+))?)?(Z|[+-]\d\d:?\d\d)?)?$`)

// toMillisImpl is $toMillis(timestamp, picture).
func toMillisImpl(c value.Context, args []any) (any, error) {
	s, picture, hasPicture, ok, err := pictureArgs[string](args)
	if err != nil || !ok {
		return nil, err
	}
	if hasPicture {
		return parseDateTime(s, picture, c.Now())
	}
	if !isoTimestamp.MatchString(s) {
		return nil, &value.Error{Code: "D3110", Value: s}
	}
	ms, ok := parseISO(s)
	if !ok {
		return nil, &value.Error{Code: "D3110", Value: s}
	}
	return ms, nil
}

// parseISO reads an ISO 8601 timestamp as JavaScript's Date.parse (V8's) does: a day past the end of its month (up
// to 31) runs into the next month.
func parseISO(s string) (float64, bool) {
	m := isoParts.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	num := func(i int, def int) int {
		if m[i] == "" {
			return def
		}
		n, _ := strconv.Atoi(m[i])
		return n
	}
	y, mo, d := num(1, 0), num(2, 1), num(3, 1)
	h, mi, sec := num(4, 0), num(5, 0), num(6, 0)
	ms := 0
	if f := m[7]; f != "" {
		f = (f + "00")[:3]
		ms, _ = strconv.Atoi(f)
	}
	if mo < 1 || mo > 12 || d < 1 || d > 31 || mi > 59 || sec > 59 || h > 24 || (h == 24 && (mi > 0 || sec > 0 || ms > 0)) {
		return 0, false
	}
	offset := 0
	if z := m[8]; z != "" && z != "Z" {
		z = strings.ReplaceAll(z, ":", "")
		oh, _ := strconv.Atoi(z[1:3])
		om, _ := strconv.Atoi(z[3:5])
		if oh > 23 || om > 59 {
			return 0, false
		}
		offset = oh*60 + om
		if z[0] == '-' {
			offset = -offset
		}
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, ms*1e6, time.UTC)
	return float64(t.UnixMilli() - int64(offset)*60000), true
}

// numberWordPattern matches English number words ("twenty-first", "one hundred and two").
var numberWordPattern = func() string {
	words := make([]string, 0, len(wordValues)+1)
	for w := range wordValues {
		words = append(words, w)
	}
	words = append(words, "and")
	// Longer words first, so that "seventeen" is not read as "seven" and "teen".
	sort.Slice(words, func(i, j int) bool {
		if len(words[i]) != len(words[j]) {
			return len(words[i]) > len(words[j])
		}
		return words[i] < words[j]
	})
	return `(?:` + strings.Join(words, "|") + `|[\-, ])+`
}()

// reader reads the text a marker matched into the component's value; ok is false when it cannot.
type reader func(text string) (v float64, ok bool)

// parseDateTime reads a timestamp written as the picture says (JSONata's reading: a regular expression of the
// whole picture, case-insensitive, then rules on which components must be given).
func parseDateTime(s, picture string, now time.Time) (any, error) {
	parts, err := analyseDateTime(picture)
	if err != nil {
		return nil, err
	}
	var pattern strings.Builder
	pattern.WriteString(`(?i)^`)
	readers := make([]reader, len(parts))
	for i := range parts {
		m := &parts[i]
		pattern.WriteString("(")
		if m.isLiteral {
			pattern.WriteString(regexp.QuoteMeta(m.literal))
		} else {
			re, rd, err := m.matcher()
			if err != nil {
				return nil, err
			}
			pattern.WriteString(re)
			readers[i] = rd
		}
		pattern.WriteString(")")
	}
	pattern.WriteString("$")
	re, err := regexp.Compile(pattern.String())
	if err != nil {
		return nil, nil // a picture whose pattern RE2 cannot hold matches nothing
	}
	match := re.FindStringSubmatch(s)
	if match == nil {
		return nil, nil
	}
	comps := map[rune]float64{}
	for i := range parts {
		if readers[i] == nil {
			continue
		}
		if v, ok := readers[i](match[i+1]); ok {
			comps[parts[i].component] = v
		} else {
			delete(comps, parts[i].component)
		}
	}
	if len(comps) == 0 {
		return nil, nil
	}
	return assemble(comps, now)
}

// matcher returns the regular expression of the text a marker matches, and how to read that text.
func (m *marker) matcher() (string, reader, error) {
	if m.component == 'Z' || m.component == 'z' {
		return m.zoneMatcher()
	}
	if p := m.integer; p != nil {
		return p.matcher(m.digits)
	}
	// A name: of a month, a day of the week, or am/pm.
	lookup := map[string]float64{}
	cut := func(name string) string {
		if m.maxWidth > 0 && len(name) > m.maxWidth {
			return name[:m.maxWidth]
		}
		return name
	}
	switch m.component {
	case 'M', 'x':
		for i, n := range monthNames {
			lookup[cut(n)] = float64(i + 1)
		}
	case 'F':
		for i, n := range dayNames[1:] {
			lookup[cut(n)] = float64(i + 1)
		}
	case 'P':
		lookup = map[string]float64{"am": 0, "AM": 0, "pm": 1, "PM": 1}
	default:
		return "", nil, &value.Error{Code: "D3133", Value: string(m.component)}
	}
	return `[a-zA-Z]+`, func(text string) (float64, bool) {
		v, ok := lookup[text]
		return v, ok
	}, nil
}

// zoneMatcher reads a timezone offset: ±hh:mm with the picture's separator, else ±h, ±hh or ±hhmm; GMT first
// for z.
func (m *marker) zoneMatcher() (string, reader, error) {
	prefix := ""
	if m.component == 'z' {
		prefix = "GMT"
	}
	p := m.integer
	sep := ""
	if p.kind == pictureDecimal && p.group > 0 {
		sep = string(p.sep)
	}
	re := prefix + `[-+][0-9]+`
	if sep != "" {
		re += regexp.QuoteMeta(sep) + `[0-9]+`
	}
	return re, func(text string) (float64, bool) {
		text = text[len(prefix):]
		var h, mi float64
		if sep != "" {
			i := strings.Index(strings.ToLower(text), strings.ToLower(sep)) // the match ignores case
			if i < 0 {
				return 0, false
			}
			h, _ = value.ParseInt(text[:i])
			mi, _ = value.ParseInt(text[i+len(sep):])
		} else if len(text)-1 <= 2 {
			h, _ = value.ParseInt(text)
		} else {
			h, _ = value.ParseInt(text[:3])
			mi, _ = value.ParseInt(text[3:])
		}
		return h*60 + mi, true
	}, nil
}

// matcher returns the regular expression of an integer written with the picture, and its reader. digits is the
// number of digits of a year, month or day (-1: any).
func (p *integerPicture) matcher(digits int) (string, reader, error) {
	switch p.kind {
	case pictureLetters:
		re := `[a-z]+`
		if p.letters == upperCase {
			re = `[A-Z]+`
		}
		return re, func(t string) (float64, bool) {
			v, err := fromLetters(t, p.letters)
			return v, err == nil
		}, nil
	case pictureRoman:
		re := `[mdclxvi]+`
		if p.letters == upperCase {
			re = `[MDCLXVI]+`
		}
		return re, func(t string) (float64, bool) {
			v, err := fromRoman(strings.ToUpper(t), upperCase)
			return v, err == nil
		}, nil
	case pictureWords:
		return numberWordPattern, func(t string) (float64, bool) {
			v, err := fromWords(t)
			return v, err == nil
		}, nil
	}
	count := `+`
	if digits > 0 {
		if p.optional == 0 {
			count = "{" + strconv.Itoa(digits) + "}"
		} else {
			count = "{" + strconv.Itoa(max(digits-p.optional, 0)) + "," + strconv.Itoa(digits) + "}"
		}
	}
	re := `[0-9]` + count
	if p.ordinal {
		re += `(?:th|st|nd|rd)`
	}
	return re, func(t string) (float64, bool) {
		if p.ordinal {
			t = t[:len(t)-2]
		}
		v, ok := value.ParseInt(t)
		return v, ok
	}, nil
}

// The components a timestamp's date and time are read from, as bits in the order YXMxWwdD (date) and PHhmsf (time).
// A set of components is of a kind when it has no component outside the kind and at least one inside.
const (
	dateYMD     = 0b10100001 // Y M D
	dateYd      = 0b10000010 // Y d
	dateMonthWk = 0b01010100 // X x w F: a week of a month (not read by JSONata)
	dateYearWk  = 0b01001000 // X W F: an ISO week date (not read by JSONata)
	time24      = 0b010111   // H m s f
	time12      = 0b101111   // P h m s f
)

// assemble turns the components read into milliseconds since the epoch. Components more significant than the
// first one given are today's (now's), less significant ones after the last one given are their minimum; a gap
// between given components is D3136.
func assemble(comps map[rune]float64, now time.Time) (any, error) {
	mask := func(order string) int {
		bits := 0
		for _, c := range order {
			bits <<= 1
			if v, ok := comps[c]; ok && v != 0 && !math.IsNaN(v) {
				bits |= 1
			}
		}
		return bits
	}
	is := func(kind, bits int) bool { return bits&^kind == 0 && bits&kind != 0 }
	dm := mask("YXMxWwdD")
	byYMD := is(dateYMD, dm)
	byYd := !byYMD && is(dateYd, dm)
	byMonthWeek := is(dateMonthWk, dm)
	byYearWeek := !byMonthWeek && is(dateYearWk, dm)
	tm := mask("PHhmsf")
	by24 := is(time24, tm)
	by12 := !by24 && is(time12, tm)

	order := "YMD"
	switch {
	case byYd:
		order = "Yd"
	case byMonthWeek:
		order = "XxwF"
	case byYearWeek:
		order = "XWF"
	}
	if by12 {
		order += "Phmsf"
	} else {
		order += "Hmsf"
	}
	nowUTC := now.UTC()
	started, ended := false, false
	for _, c := range order {
		if _, ok := comps[c]; ok {
			started = true
			if ended {
				return nil, &value.Error{Code: "D3136"}
			}
			continue
		}
		if started {
			comps[c] = 0
			if strings.ContainsRune("MDd", c) {
				comps[c] = 1
			}
			ended = true
		} else if c == 'P' {
			comps[c] = 0 // JSONata's default for am/pm is never pm
		} else {
			comps[c] = float64(fragment(nowUTC, c))
		}
	}
	if byMonthWeek || byYearWeek {
		return nil, &value.Error{Code: "D3136"} // week dates are not read (JSONata's limitation)
	}
	month := comps['M'] - 1
	if comps['M'] <= 0 {
		month = 0
	}
	day := comps['D']
	if byYd {
		// The month and day of the day of the year; JSONata keeps the year given, even when the day is past its end.
		if math.Abs(comps['Y']) > 1e8 || math.Abs(comps['d']) > 1e8 {
			return nil, errRange
		}
		t := time.Date(jsYear(int(comps['Y'])), 1, int(comps['d']), 0, 0, 0, 0, time.UTC)
		month, day = float64(t.Month()-1), float64(t.Day())
	}
	hour := comps['H']
	if by12 {
		hour = comps['h']
		if hour == 12 {
			hour = 0
		}
		if comps['P'] == 1 {
			hour += 12
		}
	}
	year := comps['Y']
	for _, v := range []float64{year, month, day, hour, comps['m'], comps['s'], comps['f']} {
		if math.IsNaN(v) || math.Abs(v) > 1e8 {
			return nil, errRange
		}
	}
	t := time.Date(jsYear(int(year)), time.Month(int(month)+1), int(day), int(hour), int(comps['m']), int(comps['s']), 0, time.UTC)
	ms := float64(t.UnixMilli()) + math.Trunc(comps['f'])
	if z, ok := comps['Z']; ok && z != 0 {
		ms -= z * 60000
	} else if z, ok := comps['z']; ok {
		ms -= z * 60000
	}
	if math.Abs(ms) > maxMillis {
		return nil, errRange
	}
	return ms, nil
}

// jsYear is the year JavaScript's Date.UTC builds a date in: it reads the years 0 to 99 as 1900 to 1999.
func jsYear(y int) int {
	if y >= 0 && y <= 99 {
		return y + 1900
	}
	return y
}
