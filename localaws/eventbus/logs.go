package eventbus

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// LogEvent is one event of a log group, in FilterLogEvents' shape.
type LogEvent struct {
	LogStreamName string `json:"logStreamName"`
	Timestamp     int64  `json:"timestamp"`
	Message       string `json:"message"`
	IngestionTime int64  `json:"ingestionTime"`
	EventID       string `json:"eventId"`
}

// logGroup keeps the recent events of one log group, the oldest dropped past max, and appends each to its file.
type logGroup struct {
	mu     sync.Mutex
	name   string
	max    int
	next   int64 // sequence number of the next event; events[i] has next-len(events)+i
	events []LogEvent
	file   *os.File
}

// fileName is the file a log group's events are kept in: the name with every character outside [A-Za-z0-9._-]
// replaced, so "/aws/events/x" becomes "_aws_events_x.jsonl".
func fileName(group string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, group) + ".jsonl"
}

// openLogGroup opens a log group; with dir set it reads back the last max events of its file and rewrites the file
// with only those, so the file stays bounded across restarts.
func openLogGroup(dir, name string, max int) (*logGroup, error) {
	g := &logGroup{name: name, max: max}
	if dir == "" {
		return g, nil
	}
	dir = filepath.Join(dir, "events")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("eventbus: log group %s: %w", name, err)
	}
	path := filepath.Join(dir, fileName(name))
	if err := g.load(path); err != nil {
		return nil, fmt.Errorf("eventbus: log group %s: %w", name, err)
	}
	tmp := path + ".tmp"
	var b []byte
	for _, e := range g.events {
		line, _ := json.Marshal(e)
		b = append(append(b, line...), '\n')
	}
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return nil, fmt.Errorf("eventbus: log group %s: %w", name, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("eventbus: log group %s: %w", name, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("eventbus: log group %s: %w", name, err)
	}
	g.file = f
	return g, nil
}

// load reads the file's events, keeping the last max; a torn last line (a crash mid-write) is skipped.
func (g *logGroup) load(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 2*maxEntryBytes)
	for sc.Scan() {
		var e LogEvent
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		g.keep(e)
	}
	return sc.Err()
}

// keep adds e in memory, dropping the oldest past max.
func (g *logGroup) keep(e LogEvent) {
	g.events = append(g.events, e)
	g.next++
	if len(g.events) > g.max {
		n := copy(g.events, g.events[len(g.events)-g.max:])
		clear(g.events[n:])
		g.events = g.events[:n]
	}
}

// append keeps e and writes it to the file; the event id is its sequence number in the group.
func (g *logGroup) append(e LogEvent) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	e.EventID = strconv.FormatInt(g.next, 10)
	g.keep(e)
	if g.file == nil {
		return nil
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = g.file.Write(append(line, '\n'))
	return err
}

func (g *logGroup) close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.file == nil {
		return nil
	}
	err := g.file.Close()
	g.file = nil
	return err
}

// filterRequest is FilterLogEvents' request (the fields the local server reads).
type filterRequest struct {
	LogGroupName       string   `json:"logGroupName"`
	LogGroupIdentifier string   `json:"logGroupIdentifier"`
	LogStreamNames     []string `json:"logStreamNames"`
	StartTime          *int64   `json:"startTime"`
	EndTime            *int64   `json:"endTime"`
	FilterPattern      string   `json:"filterPattern"`
	NextToken          string   `json:"nextToken"`
	Limit              *int     `json:"limit"`
}

type filterResponse struct {
	Events             []LogEvent `json:"events"`
	SearchedLogStreams []any      `json:"searchedLogStreams"`
	NextToken          string     `json:"nextToken,omitempty"`
}

// filterLogEvents answers CloudWatch Logs' FilterLogEvents over a log group's kept events, oldest first: startTime
// and endTime bound the timestamps (both inclusive), a filter pattern of plain terms keeps the events whose message
// holds every term, and nextToken pages. Only the local user reads a log group (mayRead).
func (s *Server) filterLogEvents(ctx context.Context, body []byte) (any, error) {
	var req filterRequest
	if err := decode(body, &req, "FilterLogEvents"); err != nil {
		return nil, err
	}
	name := req.LogGroupName
	if name == "" {
		name = req.LogGroupIdentifier
		if i := strings.Index(name, ":log-group:"); i >= 0 {
			name = strings.TrimSuffix(name[i+len(":log-group:"):], ":*")
		}
	}
	if name == "" {
		return nil, errorf(codeInvalidParameter, "Either logGroupName or logGroupIdentifier is required")
	}
	if err := s.mayRead(ctx, name); err != nil {
		return nil, err
	}
	limit := maxFilterLimit
	if req.Limit != nil {
		if *req.Limit < 1 || *req.Limit > maxFilterLimit {
			return nil, errorf(codeInvalidParameter, msgLimitTooLarge, *req.Limit)
		}
		limit = *req.Limit
	}
	terms, err := filterTerms(req.FilterPattern)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	g, ok := s.groups[name]
	s.mu.Unlock()
	if !ok {
		return nil, errorf(codeResourceNotFound, msgLogGroupNotFound)
	}
	from := int64(0)
	if req.NextToken != "" {
		b, err := base64.RawURLEncoding.DecodeString(req.NextToken)
		n, perr := strconv.ParseInt(string(b), 10, 64)
		if err != nil || perr != nil || n < 0 {
			return nil, errorf(codeInvalidParameter, "The specified nextToken is invalid.")
		}
		from = n
	}
	streams := map[string]bool{}
	for _, st := range req.LogStreamNames {
		streams[st] = true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	first := g.next - int64(len(g.events))
	out := filterResponse{Events: []LogEvent{}, SearchedLogStreams: []any{}}
	for i := max(from, first); i < g.next; i++ {
		e := g.events[i-first]
		switch {
		case req.StartTime != nil && e.Timestamp < *req.StartTime,
			req.EndTime != nil && e.Timestamp > *req.EndTime,
			len(streams) > 0 && !streams[e.LogStreamName],
			!matchesTerms(e.Message, terms):
			continue
		}
		if len(out.Events) == limit {
			out.NextToken = base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(i, 10)))
			break
		}
		out.Events = append(out.Events, e)
	}
	return out, nil
}

// filterTerms reads a filter pattern of plain terms (words, or "quoted phrases"); the other syntaxes of CloudWatch
// Logs' filter patterns are refused rather than silently matched differently.
func filterTerms(p string) ([]string, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return nil, nil
	}
	if strings.ContainsAny(p, "{}[]?=<>!&|") || strings.HasPrefix(p, "%") || strings.HasPrefix(p, "-") {
		return nil, errorf(codeInvalidParameter, msgUnsupportedFilter, p)
	}
	var terms []string
	for p != "" {
		if p[0] == '"' {
			end := strings.IndexByte(p[1:], '"')
			if end < 0 {
				return nil, errorf(codeInvalidParameter, "Invalid character(s) in term '%s'", p)
			}
			terms = append(terms, p[1:1+end])
			p = strings.TrimSpace(p[2+end:])
			continue
		}
		word, rest, _ := strings.Cut(p, " ")
		terms = append(terms, word)
		p = strings.TrimSpace(rest)
	}
	return terms, nil
}

func matchesTerms(msg string, terms []string) bool {
	for _, t := range terms {
		if !strings.Contains(msg, t) {
			return false
		}
	}
	return true
}

// Events returns, oldest first, the events a log group keeps (nil for an unknown group).
func (s *Server) Events(group string) []LogEvent {
	s.mu.Lock()
	g, ok := s.groups[group]
	s.mu.Unlock()
	if !ok {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]LogEvent(nil), g.events...)
}
