package sfnapi

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"sort"
	"time"
)

// tokenLifetime is how long a page token is accepted, as AWS documents for every Step Functions list ("Each
// pagination token expires after 24 hours. Using an expired pagination token will return an HTTP 400 InvalidToken
// error.").
const tokenLifetime = 24 * time.Hour

// anchor is the sort key of the last item of a page: the next page holds the items that follow it in the list's
// order. N is a number (a date in nanoseconds, an event id), S a string (an ARN, a name); a list uses one or both.
type anchor struct {
	N int64  `json:"n,omitempty"`
	S string `json:"s,omitempty"`
}

// pageCursor is what a nextToken holds, before it is encoded: the operation and the resource and filters it was
// issued for (scope, hashed so that a token stays short whatever the ARNs), the anchor and when it was issued.
type pageCursor struct {
	Op     string `json:"o"`
	Scope  string `json:"c"`
	Anchor anchor `json:"a"`
	Issued int64  `json:"t"` // Unix milliseconds, by the engine's clock
}

// pager pages one list: Op and Scope name what a token is valid for (a token issued for another operation, another
// resource or other filters is InvalidToken); Key is the anchor of an item, After reports whether item comes after
// the anchor in the list's order.
type pager[T any] struct {
	Op    string
	Scope []string
	Key   func(T) anchor
	After func(T, anchor) bool
}

// page returns the items that follow the token's anchor (all of them without a token), at most maxResults of them
// (def when zero), and the token of the next page, empty when this is the last one. items must be in the list's
// order. An item added between two pages is listed if it comes after the anchor, and none is listed twice or
// skipped because others were added.
func (p pager[T]) page(now time.Time, items []T, token string, maxResults, def, limit int) ([]T, string, error) {
	if maxResults < 0 || maxResults > limit {
		return nil, "", errorf(codeValidation, "1 validation error detected: Value '%d' at 'maxResults' failed to satisfy constraint: Member must have value less than or equal to %d", maxResults, limit)
	}
	if maxResults == 0 {
		maxResults = def
	}
	scope := p.scope()
	start := 0
	if token != "" {
		t, ok := decodeToken(token)
		if !ok || t.Op != p.Op || t.Scope != scope || now.Sub(time.UnixMilli(t.Issued)) > tokenLifetime {
			return nil, "", invalidToken(token)
		}
		start = sort.Search(len(items), func(i int) bool { return p.After(items[i], t.Anchor) })
	}
	end := min(start+maxResults, len(items))
	out := items[start:end]
	if end == len(items) || len(out) == 0 {
		return out, "", nil
	}
	next := pageCursor{Op: p.Op, Scope: scope, Anchor: p.Key(out[len(out)-1]), Issued: now.UnixMilli()}
	b, _ := json.Marshal(next)
	return out, base64.RawURLEncoding.EncodeToString(b), nil
}

// pageRequest holds the paging members of a List request.
type pageRequest struct {
	MaxResults int    `json:"maxResults"`
	NextToken  string `json:"nextToken"`
}

// list answers a List request: the page of items that req asks for (100 when it names no maxResults, 1000 at
// the most), each rendered by render, in the member key, with the next page's token when there is one.
func (p pager[T]) list(now time.Time, items []T, req pageRequest, key string, render func(T) any) (any, error) {
	items, next, err := p.page(now, items, req.NextToken, req.MaxResults, 100, 1000)
	if err != nil {
		return nil, err
	}
	out := []any{}
	for _, x := range items {
		out = append(out, render(x))
	}
	return withNextToken(map[string]any{key: out}, next), nil
}

func (p pager[T]) scope() string {
	h := sha256.New()
	for _, s := range p.Scope {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// decodeToken reads a token; ok is false when it is not one the API issued.
func decodeToken(token string) (pageCursor, bool) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return pageCursor{}, false
	}
	var t pageCursor
	if err := json.Unmarshal(b, &t); err != nil || t.Op == "" || t.Scope == "" || t.Issued <= 0 {
		return pageCursor{}, false
	}
	return t, true
}

func invalidToken(token string) *apiError {
	return errorf(codeInvalidToken, "Invalid Token: '%s'", token)
}

// byNewest pages items listed newest first by a date, ties broken by a string (an ARN) in descending order.
func byNewest[T any](op string, scope []string, date func(T) time.Time, id func(T) string) pager[T] {
	return pager[T]{Op: op, Scope: scope,
		Key: func(x T) anchor { return anchor{N: date(x).UnixNano(), S: id(x)} },
		After: func(x T, a anchor) bool {
			n := date(x).UnixNano()
			return n < a.N || n == a.N && id(x) < a.S
		}}
}

// byName pages items listed in ascending order of a unique string (a name).
func byName[T any](op string, scope []string, name func(T) string) pager[T] {
	return pager[T]{Op: op, Scope: scope,
		Key:   func(x T) anchor { return anchor{S: name(x)} },
		After: func(x T, a anchor) bool { return name(x) > a.S }}
}
