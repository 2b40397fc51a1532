package transfer

import (
	"container/list"
	"encoding/json"
	"sync"
	"time"

	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

const (
	// DefaultHistoryCacheBytes bounds the history cache of one orchestrator instance: a closed transfer's history
	// is a few kilobytes of JSON, so this keeps thousands of them in a small part of the function's memory.
	DefaultHistoryCacheBytes = 16 << 20
	// DefaultHistoryCacheMaxAge is how long a cached page is served. A page carries Step Functions' nextToken,
	// which expires 24 hours after the call that returned it; an hour leaves a caller who reads a cached page the
	// rest of the day to follow its token, wherever the next page comes from.
	DefaultHistoryCacheMaxAge = time.Hour
	// redrivablePeriod is how long after it closed a FAILED, TIMED_OUT or ABORTED Standard execution can be
	// redriven, which appends to its history; a SUCCEEDED execution cannot be.
	redrivablePeriod = 14 * 24 * time.Hour
	// historyEntryOverhead is what an entry costs besides its strings: the list element, map slot and header.
	historyEntryOverhead = 128
)

// HistoryCache keeps GetExecutionHistory pages of executions that have ended for good, so re-reading a settled
// transfer's history does not spend the account's GetExecutionHistory quota. It is bounded by bytes (the pages'
// JSON and their keys) and drops the least recently used page first; a page is served for at most its max age.
// Safe for concurrent use. A nil *HistoryCache caches nothing.
type HistoryCache struct {
	maxBytes int64
	maxAge   time.Duration

	mu      sync.Mutex
	bytes   int64
	order   *list.List // of *historyEntry, most recently used first
	entries map[historyKey]*list.Element
}

// historyKey names one page: the execution, the token it was asked with and its size, as Step Functions pages
// (a token is only valid with the same arguments). A marker key records that the execution has ended for good.
type historyKey struct {
	executionArn string
	token        string
	maxResults   int32
	marker       bool
}

type historyEntry struct {
	key    historyKey
	events []byte // the page's events in wire shape, as JSON: each hit decodes its own copy
	next   string
	stored time.Time
	size   int64
}

// historyPage is one page of an execution's history in the shape the API answers.
type historyPage struct {
	Events    []map[string]any
	NextToken string
}

// NewHistoryCache returns a cache of at most maxBytes that serves a page for at most maxAge.
func NewHistoryCache(maxBytes int64, maxAge time.Duration) *HistoryCache {
	return &HistoryCache{maxBytes: maxBytes, maxAge: maxAge, order: list.New(), entries: map[historyKey]*list.Element{}}
}

// Len returns the number of entries (pages and end-of-execution markers) in the cache.
func (c *HistoryCache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// Bytes returns what the cache's entries count against its bound.
func (c *HistoryCache) Bytes() int64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// get returns the cached page for k, if there is one younger than the max age.
func (c *HistoryCache) get(k historyKey, now time.Time) (historyPage, bool) {
	if c == nil {
		return historyPage{}, false
	}
	c.mu.Lock()
	e, ok := c.lookup(k, now)
	if ok {
		// The execution's marker is as recently used as its pages: its other pages stay cacheable.
		c.lookup(historyKey{executionArn: k.executionArn, marker: true}, now)
	}
	c.mu.Unlock()
	if !ok {
		return historyPage{}, false
	}
	page := historyPage{NextToken: e.next}
	if err := json.Unmarshal(e.events, &page.Events); err != nil {
		return historyPage{}, false
	}
	return page, true
}

// lookup returns the live entry for k and marks it used; an expired one is removed. c.mu is held.
func (c *HistoryCache) lookup(k historyKey, now time.Time) (*historyEntry, bool) {
	el, ok := c.entries[k]
	if !ok {
		return nil, false
	}
	e := el.Value.(*historyEntry)
	if now.Sub(e.stored) >= c.maxAge {
		c.remove(el)
		return nil, false
	}
	c.order.MoveToFront(el)
	return e, true
}

// put caches a page that Step Functions answered for k at now, when the execution has ended for good: the page is
// the history's last and ends with its final event (see endedForGood), or such a last page was cached before and
// left its marker. A page larger than the whole cache is not kept. It reports whether it cached the page.
func (c *HistoryCache) put(k historyKey, events []sfntypes.HistoryEvent, page historyPage, now time.Time) bool {
	if c == nil {
		return false
	}
	final := endedForGood(events, page.NextToken, now)
	marker := historyKey{executionArn: k.executionArn, marker: true}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !final {
		if _, ok := c.lookup(marker, now); !ok {
			return false
		}
	}
	b, err := json.Marshal(page.Events)
	if err != nil {
		return false
	}
	size := int64(len(b)+len(k.executionArn)+len(k.token)+len(page.NextToken)) + historyEntryOverhead
	if size > c.maxBytes {
		return false
	}
	c.store(&historyEntry{key: k, events: b, next: page.NextToken, stored: now, size: size})
	if final {
		c.store(&historyEntry{key: marker, stored: now, size: int64(len(k.executionArn)) + historyEntryOverhead})
	}
	return true
}

// store adds e (replacing an entry with its key) and evicts the least recently used entries beyond the bound.
// c.mu is held.
func (c *HistoryCache) store(e *historyEntry) {
	if el, ok := c.entries[e.key]; ok {
		c.remove(el)
	}
	c.entries[e.key] = c.order.PushFront(e)
	c.bytes += e.size
	for c.bytes > c.maxBytes {
		c.remove(c.order.Back())
	}
}

func (c *HistoryCache) remove(el *list.Element) {
	e := c.order.Remove(el).(*historyEntry)
	delete(c.entries, e.key)
	c.bytes -= e.size
}

// endedForGood reports whether the last page of a history (one without a nextToken, in forward order) ends with
// the execution's final event: ExecutionSucceeded, or ExecutionFailed, ExecutionTimedOut or ExecutionAborted once
// the execution can no longer be redriven. Before then a redrive appends to the history (ExecutionRedriven and
// what follows), so the page that ended it would not stay the last.
func endedForGood(events []sfntypes.HistoryEvent, next string, now time.Time) bool {
	if next != "" || len(events) == 0 {
		return false
	}
	last := events[len(events)-1]
	switch last.Type {
	case sfntypes.HistoryEventTypeExecutionSucceeded:
		return true
	case sfntypes.HistoryEventTypeExecutionFailed, sfntypes.HistoryEventTypeExecutionTimedOut,
		sfntypes.HistoryEventTypeExecutionAborted:
		return last.Timestamp != nil && now.Sub(*last.Timestamp) > redrivablePeriod
	}
	return false
}
