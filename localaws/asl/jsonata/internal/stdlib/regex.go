package stdlib

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// found is one match of a matcher: its text, its byte offsets in the subject, and its capture groups (a string
// each, nil for a group that took no part in the match).
type found struct {
	text       string
	start, end int
	groups     []any
}

// matches walks the matches of a matcher over a subject string, as JSONata's regex closures do: like a JavaScript
// regex with the g flag, each search starts where the previous match ended. A match of the empty string is
// allowed first, but asking for the match after it, or any later match being empty, is D1004: JSONata would never
// progress.
type matches interface {
	// first returns the first match, or nil.
	first() (*found, error)
	// next returns the match after the one last returned, or nil.
	next() (*found, error)
}

// newMatches returns the matches of m (a regex or a function following JSONata's matcher protocol) over s.
func newMatches(c value.Context, m value.Function, s string) matches {
	if re, ok := m.(*value.Regex); ok && re.Pattern != nil {
		return &regexMatches{re: re, s: s}
	}
	return &funcMatches{c: c, fn: m, s: s}
}

// regexMatches walks the matches of a compiled regex.
//
// Go's FindAll moves on from a match the way JavaScript's g flag does, except that it silently skips an empty match
// right where the previous match ended, where JSONata raises D1004; emptyAt detects that case.
type regexMatches struct {
	re  *value.Regex
	s   string
	all [][]int // every match, as FindAllStringSubmatchIndex gives them; read at the first call of next
	k   int     // index in all of the current match
	cur []int
	// behind is the pattern preceded by one character, for emptyAt; compiled when first needed.
	behind *regexp.Regexp
}

func (r *regexMatches) first() (*found, error) {
	r.cur = r.re.Pattern.FindStringSubmatchIndex(r.s)
	r.k = 0
	return r.found(r.cur), nil
}

func (r *regexMatches) next() (*found, error) {
	if r.cur == nil || r.cur[1] >= len(r.s) {
		return nil, nil
	}
	if r.cur[0] == r.cur[1] {
		return nil, r.zeroLength()
	}
	if r.all == nil {
		r.all = r.re.Pattern.FindAllStringSubmatchIndex(r.s, -1)
	}
	end := r.cur[1]
	var cand []int
	if r.k+1 < len(r.all) {
		cand = r.all[r.k+1]
	}
	if (cand == nil || cand[0] != end) && r.emptyAt(end) {
		return nil, r.zeroLength()
	}
	if cand == nil {
		r.cur = nil
		return nil, nil
	}
	if cand[0] == cand[1] {
		return nil, r.zeroLength()
	}
	r.k++
	r.cur = cand
	return r.found(cand), nil
}

// emptyAt reports whether the pattern's preferred match at byte offset i (i > 0) is the empty string. So that
// assertions looking behind i (\b, \B, ^) see the text before it, the test matches, from the character before i,
// that one character followed by the pattern.
func (r *regexMatches) emptyAt(i int) bool {
	if r.behind == nil {
		behind, err := regexp.Compile(`^(?s:.)(?:` + r.re.Pattern.String() + `)`)
		if err != nil {
			return false
		}
		r.behind = behind
	}
	_, w := utf8.DecodeLastRuneInString(r.s[:i])
	loc := r.behind.FindStringIndex(r.s[i-w:])
	return loc != nil && loc[1] == w
}

func (r *regexMatches) zeroLength() error {
	return &value.Error{Code: "D1004", Value: r.re.Source}
}

// found converts a FindStringSubmatchIndex result.
func (r *regexMatches) found(loc []int) *found {
	if loc == nil {
		return nil
	}
	f := &found{text: r.s[loc[0]:loc[1]], start: loc[0], end: loc[1]}
	for i := 2; i+1 < len(loc); i += 2 {
		if loc[i] < 0 {
			f.groups = append(f.groups, nil)
		} else {
			f.groups = append(f.groups, r.s[loc[i]:loc[i+1]])
		}
	}
	return f
}

// funcMatches walks the matches of a function following JSONata's matcher protocol: called with the subject, it
// returns undefined or an object {match, start, end, groups, next} where start and end count UTF-16 code units and
// next is a function of no arguments returning the next such object.
type funcMatches struct {
	c    value.Context
	fn   value.Function
	s    string
	more value.Function
}

func (f *funcMatches) first() (*found, error) {
	res, err := f.c.Call(f.fn, []any{f.s})
	if err != nil {
		return nil, err
	}
	return f.read(res)
}

func (f *funcMatches) next() (*found, error) {
	if f.more == nil {
		return nil, nil
	}
	res, err := f.c.Call(f.more, nil)
	if err != nil {
		return nil, err
	}
	return f.read(res)
}

// read checks and converts one result of the matcher: T1010 when it is not a match object.
func (f *funcMatches) read(res any) (*found, error) {
	f.more = nil
	if !jsTruthy(res) {
		return nil, nil
	}
	o, ok := res.(*value.Object)
	if !ok {
		return nil, &value.Error{Code: "T1010"}
	}
	start, okStart := o.Get("start")
	groups, _ := o.Get("groups")
	next, _ := o.Get("next")
	_, okNum := start.(float64)
	ga, okGroups := groups.(*value.Array)
	nf, okNext := next.(value.Function)
	if !(okStart && okNum) && !okGroups && !okNext {
		return nil, &value.Error{Code: "T1010"}
	}
	f.more = nf
	out := &found{}
	out.text, _ = field(o, "match").(string)
	s, _ := field(o, "start").(float64)
	e, ok := field(o, "end").(float64)
	out.start = utf16ToByte(f.s, s)
	if ok {
		out.end = utf16ToByte(f.s, e)
	} else {
		out.end = min(len(f.s), out.start+len(out.text))
	}
	out.end = max(out.end, out.start)
	if ga != nil {
		out.groups = ga.Items
	}
	return out, nil
}

// utf16ToByte converts an offset in UTF-16 code units into a byte offset in s, clamped to s.
func utf16ToByte(s string, units float64) int {
	if !(units > 0) {
		return 0
	}
	n := 0.0
	for i, r := range s {
		if n >= units {
			return i
		}
		n += float64(utf16Units(r))
	}
	return len(s)
}

// utf16Units is the number of UTF-16 code units of a rune.
func utf16Units(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// utf16Counter converts increasing byte offsets of one string into UTF-16 offsets without rescanning the string.
type utf16Counter struct {
	s     string
	byteI int
	units int
}

// at returns the UTF-16 offset of byte offset i (i must not be less than the previous call's).
func (u *utf16Counter) at(i int) int {
	if i < u.byteI {
		u.byteI, u.units = 0, 0
	}
	for u.byteI < i && u.byteI < len(u.s) {
		r, size := utf8.DecodeRuneInString(u.s[u.byteI:])
		u.units += utf16Units(r)
		u.byteI += size
	}
	return u.units
}

// groupsArray is the groups of a match as an array for a JSONata value: a group that took no part is null.
func groupsArray(groups []any) *value.Array {
	out := make([]any, len(groups))
	for i, g := range groups {
		if g == nil {
			g = value.Null
		}
		out[i] = g
	}
	return value.NewArray(out...)
}

// limitArg reads an optional limit argument: absent is no limit (ok false); a negative one is the given error.
func limitArg(args []any, i int, code string) (limit float64, limited bool, err error) {
	l, ok := arg(args, i).(float64)
	if !ok {
		return 0, false, nil
	}
	if l < 0 {
		return 0, false, &value.Error{Code: code, Value: l, Index: i + 1}
	}
	return l, true, nil
}

// fnMatch is $match(str, pattern, limit): a sequence of {match, index, groups}, index in UTF-16 code units.
func fnMatch(c value.Context, args []any) (any, error) {
	s, ok := arg(args, 0).(string)
	if !ok {
		return nil, nil
	}
	limit, limited, err := limitArg(args, 2, "D3040")
	if err != nil {
		return nil, err
	}
	out := value.NewSequence()
	if limited && !(limit > 0) {
		return out, nil
	}
	m, _ := arg(args, 1).(value.Function)
	if m == nil {
		return out, nil
	}
	it := newMatches(c, m, s)
	pos := utf16Counter{s: s}
	f, err := it.first()
	for count := 0.0; err == nil && f != nil && (!limited || count < limit); count++ {
		o := value.NewObject(3)
		o.Set("match", f.text)
		o.Set("index", float64(pos.at(f.start)))
		o.Set("groups", groupsArray(f.groups))
		out.Items = append(out.Items, o)
		f, err = it.next()
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// fnContains is $contains(str, pattern): whether the string or a match of the regex occurs in str.
func fnContains(c value.Context, args []any) (any, error) {
	s, ok := arg(args, 0).(string)
	if !ok {
		return nil, nil
	}
	switch p := arg(args, 1).(type) {
	case string:
		return strings.Contains(s, p), nil
	case value.Function:
		f, err := newMatches(c, p, s).first()
		if err != nil {
			return nil, err
		}
		return f != nil, nil
	}
	return false, nil
}

// fnReplace is $replace(str, pattern, replacement, limit). With a string pattern the replacement is inserted as it
// is; with a regex, a string replacement has $0 (the match), $n (group n) and $$ (a dollar) substituted, and a
// function replacement is called with the match object {match, start, end, groups} and must return a string.
func fnReplace(c value.Context, args []any) (any, error) {
	s, ok := arg(args, 0).(string)
	if !ok {
		return nil, nil
	}
	pattern := arg(args, 1)
	if pattern == "" {
		return nil, &value.Error{Code: "D3010", Value: pattern, Index: 2}
	}
	limit, limited, err := limitArg(args, 3, "D3011")
	if err != nil {
		return nil, err
	}
	if limited && !(limit > 0) {
		return s, nil
	}
	replacement := arg(args, 2)
	var b strings.Builder
	if p, ok := pattern.(string); ok {
		with, _ := replacement.(string)
		pos := 0
		for count := 0.0; !limited || count < limit; count++ {
			i := strings.Index(s[pos:], p)
			if i < 0 {
				break
			}
			b.WriteString(s[pos : pos+i])
			b.WriteString(with)
			pos += i + len(p)
			if b.Len() > maxStringBytes {
				return nil, ErrTooLarge
			}
		}
		b.WriteString(s[pos:])
		return b.String(), nil
	}
	m, _ := pattern.(value.Function)
	if m == nil {
		return s, nil
	}
	it := newMatches(c, m, s)
	units := utf16Counter{s: s}
	f, err := it.first()
	pos := 0
	for count := 0.0; err == nil && f != nil && (!limited || count < limit); count++ {
		if f.start >= pos {
			b.WriteString(s[pos:f.start])
		}
		var with any
		switch r := replacement.(type) {
		case string:
			with = substitute(r, f)
		case value.Function:
			o := value.NewObject(4)
			o.Set("match", f.text)
			o.Set("start", float64(units.at(f.start)))
			o.Set("end", float64(units.at(f.end)))
			o.Set("groups", groupsArray(f.groups))
			if with, err = c.Call(r, []any{o}); err != nil {
				return nil, err
			}
		}
		str, ok := with.(string)
		if !ok {
			return nil, &value.Error{Code: "D3012", Value: with}
		}
		b.WriteString(str)
		if b.Len() > maxStringBytes {
			return nil, ErrTooLarge
		}
		pos = max(pos, f.start+len(f.text))
		f, err = it.next()
	}
	if err != nil {
		return nil, err
	}
	if pos < len(s) {
		b.WriteString(s[pos:])
	}
	return b.String(), nil
}

// substitute writes a replacement string for one match: $$ is a dollar, $0 the match, $ followed by digits the group
// of that number (as many digits as the number of groups has, one fewer if that names no group; an absent group
// writes nothing), and any other $ is itself.
func substitute(repl string, f *found) string {
	var b strings.Builder
	ngroups := len(f.groups)
	maxDigits := 1
	if ngroups > 0 {
		maxDigits = len(strconv.Itoa(ngroups))
	}
	pos := 0
	for pos < len(repl) {
		i := strings.IndexByte(repl[pos:], '$')
		if i < 0 {
			break
		}
		b.WriteString(repl[pos : pos+i])
		pos += i + 1
		if pos < len(repl) && repl[pos] == '$' {
			b.WriteByte('$')
			pos++
			continue
		}
		if pos < len(repl) && repl[pos] == '0' {
			b.WriteString(f.text)
			pos++
			continue
		}
		n, text, ok := parseIntPrefix(repl[pos:min(len(repl), pos+maxDigits)])
		if ok && maxDigits > 1 && n > ngroups {
			n, text, ok = parseIntPrefix(repl[pos:min(len(repl), pos+maxDigits-1)])
		}
		if !ok {
			b.WriteByte('$')
			continue
		}
		if n >= 1 && n <= ngroups {
			if g, ok := f.groups[n-1].(string); ok {
				b.WriteString(g)
			}
		}
		pos += len(text)
	}
	b.WriteString(repl[pos:])
	return b.String()
}

// parseIntPrefix reads a group number at the start of s as JavaScript's parseInt(s, 10) does (value.ParseInt),
// returning it with the text its toString() would give, whose length JSONata skips.
func parseIntPrefix(s string) (int, string, bool) {
	f, ok := value.ParseInt(s)
	n := int(f)
	return n, strconv.Itoa(n), ok
}

// fnSplit is $split(str, separator, limit): an array of the pieces of str between occurrences of the separator (a
// string or a regex), at most limit of them.
func fnSplit(c value.Context, args []any) (any, error) {
	s, ok := arg(args, 0).(string)
	if !ok {
		return nil, nil
	}
	limit, limited, err := limitArg(args, 2, "D3020")
	if err != nil {
		return nil, err
	}
	out := value.NewArray()
	if limited && !(limit > 0) {
		return out, nil
	}
	switch sep := arg(args, 1).(type) {
	case string:
		max := -1
		if limited {
			max = int(toUint32(limit))
			if max == 0 {
				return out, nil
			}
		}
		var parts []string
		if sep == "" {
			parts = strings.Split(s, "")
			if max >= 0 && len(parts) > max {
				parts = parts[:max]
			}
		} else {
			parts = strings.SplitN(s, sep, -1)
			if max >= 0 && len(parts) > max {
				parts = parts[:max]
			}
		}
		for _, p := range parts {
			out.Items = append(out.Items, p)
		}
	case value.Function:
		it := newMatches(c, sep, s)
		f, err := it.first()
		if err != nil {
			return nil, err
		}
		if f == nil {
			out.Items = append(out.Items, s)
			return out, nil
		}
		start := 0
		count := 0.0
		for ; f != nil && (!limited || count < limit); count++ {
			out.Items = append(out.Items, s[min(start, f.start):f.start])
			start = f.end
			if f, err = it.next(); err != nil {
				return nil, err
			}
		}
		if !limited || count < limit {
			out.Items = append(out.Items, s[min(start, len(s)):])
		}
	}
	return out, nil
}

// toUint32 is JavaScript's ToUint32.
func toUint32(f float64) uint32 {
	if f != f || math.IsInf(f, 0) {
		return 0
	}
	return uint32(int64(math.Mod(math.Trunc(f), 1<<32)))
}

// field returns an object's value for a key, or nil.
func field(o *value.Object, k string) any {
	v, _ := o.Get(k)
	return v
}
