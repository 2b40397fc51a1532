package format

import (
	"errors"
	"math"
	"strings"
	"time"
	"unicode"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// Timestamps in pictures (XPath F&O 3.1, 9.8.4, fn:format-dateTime), as JSONata 2.0.6 writes and reads them.
// A picture is literal text and variable markers in brackets: [Y0001] is the year in at least four digits, [MNn]
// the month's name in title case, [D1o] the day of the month as an ordinal, [Z01:01t] the timezone ("Z" for UTC).

// isoPicture is the picture of $fromMillis without one: ISO 8601 with milliseconds, as JavaScript's toISOString.
const isoPicture = "[Y0001]-[M01]-[D01]T[H01]:[m01]:[s01].[f001][Z01:01t]"

// maxMillis bounds the timestamps JSONata can write: JavaScript's dates are within 8.64e15 ms of the epoch.
const maxMillis = 8.64e15

// errRange is the error of a timestamp outside JavaScript's dates.
var errRange = errors.New("the timestamp is outside the range of dates JSONata supports (8.64e15 milliseconds either side of 1970)")

// defaultPresentation is the presentation of each component when its marker has none; a letter without one is not
// a component (D3132).
var defaultPresentation = map[rune]string{
	'Y': "1", 'M': "1", 'D': "1", 'd': "1", 'F': "n", 'W': "1", 'w': "1", 'X': "1", 'x': "1", 'H': "1", 'h': "1",
	'P': "n", 'm': "01", 's': "01", 'f': "1", 'Z': "01:01", 'z': "01:01", 'C': "n", 'E': "n",
}

var (
	monthNames = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September",
		"October", "November", "December"}
	dayNames = []string{"", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
)

// marker is one part of an analysed date-time picture: literal text, or a variable marker.
type marker struct {
	literal   string
	isLiteral bool

	component rune
	// names is set when the component is written as a name (N, n, Nn), in that case.
	names    bool
	nameCase letterCase
	// integer is the picture of a component written as a number.
	integer *integerPicture
	// minWidth and maxWidth are the width modifier's bounds (-1: none).
	minWidth, maxWidth int
	// modifier is the second presentation modifier (a, t, c, o), if any.
	modifier byte
	// digits is the number of digits a year is written with (-1: all), and read with for Y, M and D.
	digits int
}

// analyseDateTime reads a date-time picture into its parts.
func analyseDateTime(picture string) ([]marker, error) {
	var parts []marker
	addLiteral := func(s string) {
		if s != "" {
			parts = append(parts, marker{isLiteral: true, literal: strings.ReplaceAll(s, "]]", "]")})
		}
	}
	start := 0
	for pos := 0; pos < len(picture); pos++ {
		if picture[pos] != '[' {
			continue
		}
		if pos+1 < len(picture) && picture[pos+1] == '[' { // [[ is a literal [
			addLiteral(picture[start:pos])
			parts = append(parts, marker{isLiteral: true, literal: "["})
			pos++
			start = pos + 1
			continue
		}
		addLiteral(picture[start:pos])
		end := strings.IndexByte(picture[pos:], ']')
		if end < 0 {
			return nil, &value.Error{Code: "D3135"}
		}
		end += pos
		m, err := analyseMarker(strings.Join(strings.FieldsFunc(picture[pos+1:end], unicode.IsSpace), ""))
		if err != nil {
			return nil, err
		}
		parts = append(parts, m)
		pos = end
		start = end + 1
	}
	addLiteral(picture[start:])
	return parts, nil
}

// analyseMarker reads the text of a variable marker (without brackets and white space): a component letter, a
// presentation modifier and a width modifier (",min-max").
func analyseMarker(text string) (marker, error) {
	m := marker{minWidth: -1, maxWidth: -1, digits: -1}
	runes := []rune(text)
	if len(runes) > 0 {
		m.component = runes[0]
	}
	presentation := ""
	if comma := strings.LastIndexByte(text, ','); comma >= 0 {
		width := text[comma+1:]
		lo, hi, hasMax := width, "", false
		if dash := strings.IndexByte(width, '-'); dash >= 0 {
			lo, hi, hasMax = width[:dash], width[dash+1:], true
		}
		var err error
		if m.minWidth, err = widthBound(lo); err != nil {
			return m, err
		}
		if hasMax {
			if m.maxWidth, err = widthBound(hi); err != nil {
				return m, err
			}
		}
		if len(runes) > 0 {
			// After the component letter and before the comma (JavaScript's substring, which swaps its bounds when
			// the comma is the first character).
			from := len(string(runes[0]))
			presentation = text[min(from, comma):max(from, comma)]
		}
	} else if len(runes) > 0 {
		presentation = string(runes[1:])
	}
	first := presentation
	switch pr := []rune(presentation); {
	case len(pr) == 0:
		p, ok := defaultPresentation[m.component]
		if !ok {
			return m, &value.Error{Code: "D3132", Value: string(m.component)}
		}
		first = p
	case len(pr) > 1 && strings.ContainsRune("atco", pr[len(pr)-1]):
		m.modifier = byte(pr[len(pr)-1])
		first = string(pr[:len(pr)-1])
	}
	switch {
	case strings.HasPrefix(first, "n"):
		m.names, m.nameCase = true, lowerCase
	case strings.HasPrefix(first, "Nn"):
		m.names, m.nameCase = true, titleCase
	case strings.HasPrefix(first, "N"):
		m.names, m.nameCase = true, upperCase
	case strings.ContainsRune("YMDdFWwXxHhmsf", m.component):
		pattern := first
		if m.modifier != 0 {
			pattern += ";" + string(m.modifier)
		}
		p, err := analyseIntegerPicture(pattern)
		if err != nil {
			return m, err
		}
		m.integer = p
		if m.minWidth > p.mandatory {
			p.mandatory = m.minWidth
		}
		if strings.ContainsRune("YMD", m.component) {
			// A year is written with as many digits as the picture or the width asks (its last ones).
			switch {
			case m.maxWidth >= 0:
				m.digits = m.maxWidth
				p.mandatory = m.maxWidth
			case p.kind == pictureDecimal && p.mandatory+p.optional >= 2:
				m.digits = p.mandatory + p.optional
			}
		}
	}
	if m.component == 'Z' || m.component == 'z' {
		p, err := analyseIntegerPicture(first)
		var je *value.Error
		switch {
		case errors.As(err, &je) && je.Code == "D3130":
			// Not digits: writing the offset is D3134 (formatZone); reading it takes the digits given.
			p = &integerPicture{kind: pictureSequence}
		case err != nil:
			return m, err
		}
		m.integer = p
	}
	return m, nil
}

// maxWidth bounds the widths of components, so that a picture's result stays within a small multiple of its
// length (JSONata has no bound: [Y,1000000] writes a million digits).
const maxWidth = 1000

// errWidth is the error of a width above maxWidth.
var errWidth = errors.New("a width modifier of a date/time picture above 1000 is not supported")

// widthBound reads a bound of a width modifier: "*" or nothing is none (-1); otherwise its leading digits.
func widthBound(s string) (int, error) {
	if s == "" || s == "*" {
		return -1, nil
	}
	n, ok := value.ParseInt(s)
	switch {
	case !ok || n < 0:
		return -1, nil
	case n > maxWidth:
		return 0, errWidth
	}
	return int(n), nil
}

// fromMillisImpl is $fromMillis(millis, picture, timezone).
func fromMillisImpl(_ value.Context, args []any) (any, error) {
	ms, picture, hasPicture, ok, err := pictureArgs[float64](args)
	if err != nil || !ok {
		return nil, err
	}
	tz, hasTZ, err := typedArg[string](args, 2)
	if err != nil {
		return nil, err
	}
	if !hasPicture {
		picture = isoPicture
	}
	// The timezone is "±hhmm", read as JavaScript's parseInt reads it: its hours are the number divided by 100
	// rounded down, its minutes the remainder (so "-0530" is -6 hours and -30 minutes, as in JSONata).
	var offHours, offMinutes float64
	if hasTZ {
		n, ok := value.ParseInt(tz)
		if !ok || math.Abs(n) > 1e6 {
			return nil, errors.New("$fromMillis: the timezone " + value.Format(tz, false) + " is not ±hhmm")
		}
		offHours = math.Floor(n / 100)
		offMinutes = math.Mod(n, 100)
	}
	parts, err := analyseDateTime(picture)
	if err != nil {
		return nil, err
	}
	shifted := ms + (offHours*60+offMinutes)*60000
	if math.IsNaN(shifted) || math.Abs(shifted) > maxMillis || math.Abs(ms) > maxMillis {
		return nil, errRange
	}
	t := time.UnixMilli(int64(math.Trunc(shifted))).UTC()
	var b strings.Builder
	for i := range parts {
		m := &parts[i]
		if m.isLiteral {
			b.WriteString(m.literal)
			continue
		}
		s, err := m.format(t, offHours, offMinutes)
		if err != nil {
			return nil, err
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// format writes the component of the marker for the time t (already shifted to the timezone).
func (m *marker) format(t time.Time, offHours, offMinutes float64) (string, error) {
	switch c := m.component; {
	case strings.ContainsRune("YMDdFWwXxHhms", c):
		v := float64(fragment(t, c))
		if c == 'Y' && m.digits >= 0 {
			v = math.Mod(v, math.Pow(10, float64(m.digits)))
		}
		if !m.names {
			return m.integer.format(v)
		}
		var name string
		switch c {
		case 'M', 'x':
			name = monthNames[int(v)-1]
		case 'F':
			name = dayNames[int(v)]
		default:
			return "", &value.Error{Code: "D3133", Value: string(c)}
		}
		switch m.nameCase {
		case upperCase:
			name = strings.ToUpper(name)
		case lowerCase:
			name = strings.ToLower(name)
		}
		if m.maxWidth >= 0 && len(name) > m.maxWidth {
			name = name[:m.maxWidth]
		}
		return name, nil
	case c == 'f':
		if m.integer == nil {
			return "", &value.Error{Code: "D3133", Value: string(c)}
		}
		return m.integer.format(float64(t.Nanosecond() / 1e6))
	case c == 'Z' || c == 'z':
		return m.formatZone(offHours, offMinutes)
	case c == 'P':
		if t.Hour() >= 12 {
			if m.names && m.nameCase == upperCase {
				return "PM", nil
			}
			return "pm", nil
		}
		if m.names && m.nameCase == upperCase {
			return "AM", nil
		}
		return "am", nil
	case c == 'C' || c == 'E':
		return "ISO", nil
	}
	// A component letter JSONata does not know, given a presentation, is written as JavaScript writes undefined.
	return "undefined", nil
}

// formatZone writes the timezone offset: with a regular grouping separator ("01:01") the offset as hhmm grouped;
// with one or two digits the hours, then ":mm" when there are minutes; with three or four digits hhmm.
func (m *marker) formatZone(offHours, offMinutes float64) (string, error) {
	offset := offHours*100 + offMinutes
	p := m.integer
	var s string
	var err error
	switch {
	case p.kind == pictureDecimal && p.group > 0:
		s, err = p.format(offset)
	case p.kind == pictureDecimal && (p.mandatory == 1 || p.mandatory == 2):
		s, err = p.format(offHours)
		if err == nil && offMinutes != 0 {
			var mm string
			mm, err = formatInteger(offMinutes, "00")
			s += ":" + mm
		}
	case p.kind == pictureDecimal && (p.mandatory == 3 || p.mandatory == 4):
		s, err = p.format(offset)
	default:
		digits := 0.0
		if p.kind == pictureDecimal {
			digits = float64(p.mandatory)
		}
		return "", &value.Error{Code: "D3134", Value: digits}
	}
	if err != nil {
		return "", err
	}
	if offset >= 0 {
		s = "+" + s
	}
	if m.component == 'z' {
		s = "GMT" + s
	}
	if offset == 0 && m.modifier == 't' {
		s = "Z"
	}
	return s, nil
}

// fragment returns the value of a component for the time t: P is 0 (am) or 1 (pm), F runs from 1 (Monday) to 7.
func fragment(t time.Time, c rune) int {
	switch c {
	case 'Y':
		return t.Year()
	case 'M':
		return int(t.Month())
	case 'D':
		return t.Day()
	case 'd':
		return jsDay(t.Year(), int(t.Month()), t.Day()) - jsDay(t.Year(), 1, 1) + 1
	case 'F':
		if wd := int(t.Weekday()); wd != 0 {
			return wd
		}
		return 7
	case 'W':
		y := t.Year()
		return weekOf(jsDay(y, int(t.Month()), t.Day()), firstWeekStart(y, 1), firstWeekStart(y+1, 1),
			firstWeekStart(y-1, 1), 52)
	case 'X':
		y := t.Year()
		return y + periodOf(t, firstWeekStart(y, 1), firstWeekStart(y+1, 1))
	case 'w':
		y, m := t.Year(), int(t.Month())
		py, pm := previousMonth(y, m)
		ny, nm := nextMonth(y, m)
		return weekOf(jsDay(y, m, t.Day()), firstWeekStart(y, m), firstWeekStart(ny, nm), firstWeekStart(py, pm), 4)
	case 'x':
		y, m := t.Year(), int(t.Month())
		ny, nm := nextMonth(y, m)
		switch periodOf(t, firstWeekStart(y, m), firstWeekStart(ny, nm)) {
		case -1:
			_, pm := previousMonth(y, m)
			return pm
		case 1:
			return nm
		}
		return m
	case 'H':
		return t.Hour()
	case 'h':
		if h := t.Hour() % 12; h != 0 {
			return h
		}
		return 12
	case 'P':
		if t.Hour() >= 12 {
			return 1
		}
		return 0
	case 'm':
		return t.Minute()
	case 's':
		return t.Second()
	case 'f':
		return t.Nanosecond() / 1e6
	}
	return 0
}

// The week components are computed on day numbers (days since the epoch) of dates built as JavaScript's Date.UTC
// builds them, which reads the years 0 to 99 as 1900 to 1999: JSONata's answers for those years follow.

// jsDay returns the day number of a date, its year read as Date.UTC reads it.
func jsDay(y, m, d int) int {
	return int(time.Date(jsYear(y), time.Month(m), d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// firstWeekStart returns the day number of the Monday that starts the first week of a month (of a year: January):
// as ISO 8601 says for years, the week that holds the month's first Thursday.
func firstWeekStart(y, m int) int {
	first := jsDay(y, m, 1)
	wd := ((first+3)%7+7)%7 + 1 // 1970-01-01 was a Thursday; Monday is 1
	if wd > 4 {
		return first + 8 - wd
	}
	return first - (wd - 1)
}

// weekOf returns the week of the day in the period that starts its first week at start; past the period's fourth
// (month) or 52nd (year) week, the day may be in the next period's first week, and before its first week it is in
// the previous period's last one.
func weekOf(day, start, next, previous, last int) int {
	week := float64(day-start)/7 + 1
	if week > float64(last) {
		if day >= next {
			week = 1
		}
	} else if week < 1 {
		week = float64(day-previous)/7 + 1
	}
	return int(math.Floor(week))
}

// periodOf returns -1, 0 or 1 as the instant's day is before the period's first week, in the period, or from the
// next period's first week on.
func periodOf(t time.Time, start, next int) int {
	day := int(math.Floor(float64(t.UnixMilli()) / 864e5))
	switch {
	case day < start:
		return -1
	case day >= next:
		return 1
	}
	return 0
}

func previousMonth(y, m int) (int, int) {
	if m == 1 {
		return y - 1, 12
	}
	return y, m - 1
}

func nextMonth(y, m int) (int, int) {
	if m == 12 {
		return y + 1, 1
	}
	return y, m + 1
}
