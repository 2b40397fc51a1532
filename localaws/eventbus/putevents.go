package eventbus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/smithy-go"
)

// putEventsRequest is PutEvents' request. Time is epoch seconds, as the SDKs send it.
type putEventsRequest struct {
	Entries    *[]putEventsEntry `json:"Entries"`
	EndpointID string            `json:"EndpointId"`
}

type putEventsEntry struct {
	Source       *string  `json:"Source"`
	DetailType   *string  `json:"DetailType"`
	Detail       *string  `json:"Detail"`
	EventBusName *string  `json:"EventBusName"`
	Resources    []string `json:"Resources"`
	Time         *float64 `json:"Time"`
	TraceHeader  string   `json:"TraceHeader"`
}

// resultEntry is one entry of PutEvents' answer: EventId, or ErrorCode and ErrorMessage.
type resultEntry struct {
	EventID      string `json:"EventId,omitempty"`
	ErrorCode    string `json:"ErrorCode,omitempty"`
	ErrorMessage string `json:"ErrorMessage,omitempty"`
}

type putEventsResponse struct {
	Entries          []resultEntry `json:"Entries"`
	FailedEntryCount int           `json:"FailedEntryCount"`
}

// Event is an event as EventBridge delivers it to a rule's target.
type Event struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       string          `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// putEvents validates the request as EventBridge does (a request-level problem is a ValidationException; an entry's
// problem fails that entry only, with its ErrorCode), then routes each accepted entry.
func (s *Server) putEvents(_ context.Context, body []byte) (any, error) {
	var req putEventsRequest
	if err := decode(body, &req, "PutEvents"); err != nil {
		return nil, err
	}
	return s.put(req)
}

// put is PutEvents on a decoded request, whichever way it came.
func (s *Server) put(req putEventsRequest) (putEventsResponse, error) {
	switch {
	case req.Entries == nil:
		return putEventsResponse{}, errorf(codeValidation, msgEntriesRequired)
	case len(*req.Entries) == 0:
		return putEventsResponse{}, errorf(codeValidation, msgEntriesTooFew)
	case len(*req.Entries) > maxEntries:
		return putEventsResponse{}, errorf(codeValidation, msgEntriesTooMany)
	}
	if f := s.takeFault(faultError); f != nil {
		return putEventsResponse{}, f.apiError()
	}
	failEntries := s.takeFault(faultFailedEntry)
	out := putEventsResponse{Entries: make([]resultEntry, 0, len(*req.Entries))}
	for _, e := range *req.Entries {
		var res resultEntry
		if failEntries != nil {
			res = resultEntry{ErrorCode: failEntries.Code, ErrorMessage: "injected by --fault " + failEntries.spec}
		} else {
			res = s.putEntry(e)
		}
		if res.ErrorCode != "" {
			out.FailedEntryCount++
		}
		out.Entries = append(out.Entries, res)
	}
	return out, nil
}

// PutEvents is PutEvents called in-process, with the SDK's types, for the local Step Functions engine's
// events:putEvents tasks (sfnengine.EventBridgeAPI): the same validation, faults, routing and answers as a request
// through ServeHTTP, without the HTTP round trip and the SDK's request pipeline on both sides, as AWS's own
// integration does not go through a public endpoint either. A refused request is a smithy.APIError with the code
// and message the HTTP answer carries, as the SDK would have decoded it. The options are ignored.
func (s *Server) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	var req putEventsRequest
	if in.Entries != nil {
		entries := make([]putEventsEntry, len(in.Entries))
		for i, e := range in.Entries {
			entries[i] = putEventsEntry{Source: e.Source, DetailType: e.DetailType, Detail: e.Detail,
				EventBusName: e.EventBusName, Resources: e.Resources, TraceHeader: aws.ToString(e.TraceHeader)}
			if e.Time != nil {
				sec := float64(e.Time.UnixMilli()) / 1000 // epoch seconds, as the SDK sends them
				entries[i].Time = &sec
			}
		}
		req.Entries = &entries
	}
	res, err := s.put(req)
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) {
			return nil, &smithy.GenericAPIError{Code: ae.Code, Message: ae.Message}
		}
		return nil, err
	}
	out := &eventbridge.PutEventsOutput{FailedEntryCount: int32(res.FailedEntryCount), Entries: make([]ebtypes.PutEventsResultEntry, len(res.Entries))}
	for i, e := range res.Entries {
		out.Entries[i] = ebtypes.PutEventsResultEntry{EventId: optional(e.EventID), ErrorCode: optional(e.ErrorCode), ErrorMessage: optional(e.ErrorMessage)}
	}
	return out, nil
}

// optional is nil for "", as an answer's omitted member decodes.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// putEntry checks one entry and, when it is valid, routes it to the rules of its bus.
func (s *Server) putEntry(e putEventsEntry) resultEntry {
	fail := func(code, msg string) resultEntry { return resultEntry{ErrorCode: code, ErrorMessage: msg} }
	switch {
	case e.Source == nil || *e.Source == "":
		return fail(codeInvalidArgument, msgSourceRequired)
	case e.DetailType == nil || *e.DetailType == "":
		return fail(codeInvalidArgument, msgDetailTypeRequired)
	case e.Detail == nil || *e.Detail == "":
		return fail(codeInvalidArgument, msgDetailRequired)
	}
	detail := bytes.TrimSpace([]byte(*e.Detail))
	if len(detail) == 0 || detail[0] != '{' || !json.Valid(detail) {
		return fail(codeMalformedDetail, msgMalformedDetail)
	}
	size := len(*e.Source) + len(*e.DetailType) + len(detail)
	for _, r := range e.Resources {
		size += len(r)
	}
	if e.Time != nil {
		size += 14
	}
	if size > maxEntryBytes {
		return fail(codeEntryTooLarge, msgEntryTooLarge)
	}
	bus := s.busName(e.EventBusName)
	if !s.buses[bus] {
		return fail(codeResourceNotFound, fmt.Sprintf(msgEventBusNotFound, bus))
	}
	now := s.opts.Now()
	at := now
	if e.Time != nil {
		sec := int64(*e.Time)
		at = time.Unix(sec, int64((*e.Time-float64(sec))*1e9))
	}
	resources := e.Resources
	if resources == nil {
		resources = []string{}
	}
	ev := Event{Version: "0", ID: s.opts.NewID(), DetailType: *e.DetailType, Source: *e.Source, Account: s.opts.AccountID,
		Time: at.UTC().Format(time.RFC3339), Region: s.opts.Region, Resources: resources, Detail: detail}
	s.route(bus, ev, at, now)
	return resultEntry{EventID: ev.ID}
}

// busName turns an entry's EventBusName (a name or an ARN; empty for the default bus) into a name.
func (s *Server) busName(v *string) string {
	if v == nil || *v == "" {
		return defaultEventBusName
	}
	if i := strings.LastIndex(*v, ":event-bus/"); i >= 0 && strings.HasPrefix(*v, "arn:") {
		return (*v)[i+len(":event-bus/"):]
	}
	return *v
}

// route hands ev to every rule of bus whose pattern matches, appending it to their log groups with the event's time
// as the log event's timestamp, as EventBridge's CloudWatch Logs target does.
func (s *Server) route(bus string, ev Event, at, now time.Time) {
	msg, err := json.Marshal(ev)
	if err != nil {
		s.opts.Logger.Error("event not routed: encoding failed", "eventId", ev.ID, "error", err.Error())
		return
	}
	var asMap map[string]any
	if err := json.Unmarshal(msg, &asMap); err != nil {
		return
	}
	for _, r := range s.opts.Rules {
		if r.EventBusName != bus || !r.Pattern.Match(asMap) {
			continue
		}
		for _, name := range r.LogGroups {
			s.mu.Lock()
			g := s.groups[name]
			s.mu.Unlock()
			if err := g.append(LogEvent{Timestamp: at.UnixMilli(), Message: string(msg), LogStreamName: ev.ID, IngestionTime: now.UnixMilli()}); err != nil {
				s.opts.Logger.Error("event not kept", "rule", r.Name, "logGroup", name, "eventId", ev.ID, "error", err.Error())
			}
		}
	}
}
