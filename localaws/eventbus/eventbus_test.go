package eventbus_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	cwltypes "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/smithy-go"

	"github.com/transferflow/orchestrator/localaws/eventbus"
	"github.com/transferflow/orchestrator/localaws/eventpattern"
)

const (
	bus   = "transfers"
	group = "/aws/events/local-transfers"
)

// newServer starts a server with one bus and a rule for source transferflow.transfers to one log group, and
// returns it with the real SDK clients pointed at it (one attempt a call: no SDK retries hide what it answered). The
// edits, if any, change the server's options last.
func newServer(t *testing.T, dataDir string, maxEvents int, edits ...func(*eventbus.Options)) (*eventbus.Server, *eventbridge.Client, *cloudwatchlogs.Client) {
	t.Helper()
	p, err := eventpattern.Compile(map[string]any{"source": []any{"transferflow.transfers"}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	opts := eventbus.Options{Region: "us-east-1", AccountID: "000000000000", Buses: []string{bus},
		Rules:   []eventbus.Rule{{Name: "TransferEventsRule", EventBusName: bus, Pattern: p, LogGroups: []string{group}}},
		DataDir: dataDir, MaxEvents: maxEvents,
		NewID: func() string { n++; return fmt.Sprintf("id-%d", n) }}
	for _, edit := range edits {
		edit(&opts)
	}
	srv, err := eventbus.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	creds := aws.AnonymousCredentials{}
	eb := eventbridge.New(eventbridge.Options{Region: "us-east-1", BaseEndpoint: aws.String(hs.URL), Credentials: creds, RetryMaxAttempts: 1})
	logs := cloudwatchlogs.New(cloudwatchlogs.Options{Region: "us-east-1", BaseEndpoint: aws.String(hs.URL), Credentials: creds, RetryMaxAttempts: 1})
	return srv, eb, logs
}

func entry(source, detail string) ebtypes.PutEventsRequestEntry {
	return ebtypes.PutEventsRequestEntry{EventBusName: aws.String(bus), Source: aws.String(source),
		DetailType: aws.String("Transfer Completed"), Detail: aws.String(detail)}
}

func filter(t *testing.T, logs *cloudwatchlogs.Client, in *cloudwatchlogs.FilterLogEventsInput) *cloudwatchlogs.FilterLogEventsOutput {
	t.Helper()
	if in.LogGroupName == nil && in.LogGroupIdentifier == nil {
		in.LogGroupName = aws.String(group)
	}
	out, err := logs.FilterLogEvents(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPutEventsRoutesToTheRulesLogGroup: an event matching the rule is kept in its log group as EventBridge delivers
// it (detail an object, the bus's account and region); one that does not match is accepted but kept nowhere.
func TestPutEventsRoutesToTheRulesLogGroup(t *testing.T) {
	_, eb, logs := newServer(t, "", 0)
	ctx := context.Background()
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	e := entry("transferflow.transfers", `{"transferId":"tr_1","status":"COMPLETED","amount":1250}`)
	e.Time = aws.Time(at)
	e.Resources = []string{"arn:aws:states:us-east-1:000000000000:execution:sm:tr_1"}
	other := entry("someone.else", `{"x":1}`)
	other.EventBusName = aws.String("arn:aws:events:us-east-1:000000000000:event-bus/" + bus) // an ARN names the bus too
	out, err := eb.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{e, other}})
	if err != nil {
		t.Fatal(err)
	}
	if out.FailedEntryCount != 0 || len(out.Entries) != 2 || aws.ToString(out.Entries[0].EventId) == "" || aws.ToString(out.Entries[1].EventId) == "" {
		t.Fatalf("PutEvents = %+v", out)
	}
	got := filter(t, logs, &cloudwatchlogs.FilterLogEventsInput{})
	if len(got.Events) != 1 {
		t.Fatalf("log group has %d events, want the matching one", len(got.Events))
	}
	le := got.Events[0]
	if aws.ToInt64(le.Timestamp) != at.UnixMilli() {
		t.Errorf("timestamp %d, want the event's time %d", aws.ToInt64(le.Timestamp), at.UnixMilli())
	}
	var ev map[string]any
	if err := json.Unmarshal([]byte(aws.ToString(le.Message)), &ev); err != nil {
		t.Fatal(err)
	}
	detail, _ := ev["detail"].(map[string]any)
	if ev["source"] != "transferflow.transfers" || ev["detail-type"] != "Transfer Completed" || ev["account"] != "000000000000" ||
		ev["region"] != "us-east-1" || ev["time"] != "2026-11-23T10:00:00Z" || ev["id"] != aws.ToString(out.Entries[0].EventId) ||
		detail["transferId"] != "tr_1" || detail["amount"] != 1250.0 {
		t.Errorf("event = %v", ev)
	}
	if rs, _ := ev["resources"].([]any); len(rs) != 1 || rs[0] != e.Resources[0] {
		t.Errorf("resources = %v", ev["resources"])
	}
}

// TestPutEventsValidation: request-level problems are ValidationExceptions; an entry's problem fails that entry only,
// with EventBridge's ErrorCode, and the others are still delivered.
func TestPutEventsValidation(t *testing.T) {
	_, eb, logs := newServer(t, "", 0)
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		entries []ebtypes.PutEventsRequestEntry
	}{
		{"no entries", []ebtypes.PutEventsRequestEntry{}},
		{"eleven entries", make([]ebtypes.PutEventsRequestEntry, 11)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := eb.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: tt.entries})
			var ae smithy.APIError
			if !errors.As(err, &ae) || ae.ErrorCode() != "ValidationException" || !strings.Contains(ae.ErrorMessage(), "'entries'") {
				t.Fatalf("err = %v, want a ValidationException about entries", err)
			}
		})
	}
	noSource := entry("", `{"a":1}`)
	noType := entry("transferflow.transfers", `{"a":1}`)
	noType.DetailType = nil
	noDetail := entry("transferflow.transfers", "")
	unknownBus := entry("transferflow.transfers", `{"a":1}`)
	unknownBus.EventBusName = aws.String("nope")
	tests := []struct {
		name     string
		entry    ebtypes.PutEventsRequestEntry
		wantCode string
		wantMsg  string
	}{
		{"no source", noSource, "InvalidArgument", "Parameter Source is not valid. Reason: Source is a required argument."},
		{"no detail type", noType, "InvalidArgument", "Parameter DetailType is not valid. Reason: DetailType is a required argument."},
		{"empty detail", noDetail, "InvalidArgument", "Parameter Detail is not valid. Reason: Detail is a required argument."},
		{"detail not an object", entry("transferflow.transfers", `[1,2]`), "MalformedDetail", "Detail is malformed."},
		{"detail not JSON", entry("transferflow.transfers", `{"a":`), "MalformedDetail", "Detail is malformed."},
		{"detail too large", entry("transferflow.transfers", `{"a":"`+strings.Repeat("x", 256<<10)+`"}`), "EntrySizeLimitExceeded", "The entry size exceeds the limit of 256 KB."},
		{"unknown bus", unknownBus, "ResourceNotFoundException", "Event bus nope does not exist."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			good := entry("transferflow.transfers", `{"ok":"`+tt.name+`"}`)
			out, err := eb.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{tt.entry, good}})
			if err != nil {
				t.Fatal(err)
			}
			if out.FailedEntryCount != 1 || aws.ToString(out.Entries[0].ErrorCode) != tt.wantCode ||
				aws.ToString(out.Entries[0].ErrorMessage) != tt.wantMsg || out.Entries[0].EventId != nil {
				t.Fatalf("entry 0 = %+v (failed %d), want %s: %s", out.Entries[0], out.FailedEntryCount, tt.wantCode, tt.wantMsg)
			}
			if aws.ToString(out.Entries[1].EventId) == "" {
				t.Fatalf("the valid entry was not accepted: %+v", out.Entries[1])
			}
			got := filter(t, logs, &cloudwatchlogs.FilterLogEventsInput{FilterPattern: aws.String(`"` + tt.name + `"`)})
			if len(got.Events) != 1 {
				t.Fatalf("the valid entry was kept %d times, want once", len(got.Events))
			}
		})
	}
}

// TestFilterLogEvents: startTime, limit with nextToken paging, plain-term filter patterns, and the errors for an
// unknown log group and an unsupported pattern.
func TestFilterLogEvents(t *testing.T) {
	_, eb, logs := newServer(t, "", 0)
	ctx := context.Background()
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	for i := range 5 {
		e := entry("transferflow.transfers", fmt.Sprintf(`{"n":%d,"status":"%s"}`, i, map[bool]string{true: "FAILED", false: "COMPLETED"}[i%2 == 1]))
		e.Time = aws.Time(t0.Add(time.Duration(i) * time.Minute))
		if _, err := eb.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{e}}); err != nil {
			t.Fatal(err)
		}
	}
	if got := filter(t, logs, &cloudwatchlogs.FilterLogEventsInput{StartTime: aws.Int64(t0.Add(2 * time.Minute).UnixMilli())}); len(got.Events) != 3 {
		t.Errorf("from the third minute: %d events, want 3", len(got.Events))
	}
	if got := filter(t, logs, &cloudwatchlogs.FilterLogEventsInput{FilterPattern: aws.String("FAILED")}); len(got.Events) != 2 {
		t.Errorf("FAILED: %d events, want 2", len(got.Events))
	}
	var pages, total int
	in := &cloudwatchlogs.FilterLogEventsInput{Limit: aws.Int32(2)}
	for {
		out := filter(t, logs, in)
		pages++
		total += len(out.Events)
		if out.NextToken == nil {
			break
		}
		in.NextToken = out.NextToken
	}
	if pages != 3 || total != 5 {
		t.Errorf("paging by 2: %d pages, %d events; want 3 and 5", pages, total)
	}
	arn := "arn:aws:logs:us-east-1:000000000000:log-group:" + group
	if got := filter(t, logs, &cloudwatchlogs.FilterLogEventsInput{LogGroupIdentifier: aws.String(arn)}); len(got.Events) != 5 {
		t.Errorf("by identifier: %d events, want 5", len(got.Events))
	}

	_, err := logs.FilterLogEvents(ctx, &cloudwatchlogs.FilterLogEventsInput{LogGroupName: aws.String("/aws/events/nope")})
	var notFound *cwltypes.ResourceNotFoundException
	if !errors.As(err, &notFound) {
		t.Errorf("unknown log group: err = %v, want ResourceNotFoundException", err)
	}
	_, err = logs.FilterLogEvents(ctx, &cloudwatchlogs.FilterLogEventsInput{LogGroupName: aws.String(group), FilterPattern: aws.String(`{ $.status = "FAILED" }`)})
	var invalid *cwltypes.InvalidParameterException
	if !errors.As(err, &invalid) {
		t.Errorf("JSON filter pattern: err = %v, want InvalidParameterException", err)
	}
}

// TestUnknownOperation: an operation the server does not serve is answered in the JSON protocol's error shape.
func TestUnknownOperation(t *testing.T) {
	_, eb, _ := newServer(t, "", 0)
	_, err := eb.ListRules(context.Background(), &eventbridge.ListRulesInput{})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "UnknownOperationException" {
		t.Fatalf("err = %v, want UnknownOperationException", err)
	}
}

// TestFaults: error=CODE answers the call with that service error (InternalException as the SDK's type), and
// failed-entry=CODE fails every entry; times=N limits each to N calls.
func TestFaults(t *testing.T) {
	srv, eb, logs := newServer(t, "", 0)
	ctx := context.Background()
	for _, spec := range []string{"events:error=InternalException:times=1", "events:failed-entry=ThrottlingException:times=1"} {
		f, err := eventbus.ParseFault(spec)
		if err != nil {
			t.Fatal(err)
		}
		srv.AddFault(f)
	}
	put := func() (*eventbridge.PutEventsOutput, error) {
		return eb.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{entry("transferflow.transfers", `{"a":1}`)}})
	}
	var internal *ebtypes.InternalException
	if _, err := put(); !errors.As(err, &internal) {
		t.Fatalf("first call: err = %v, want InternalException", err)
	}
	out, err := put()
	if err != nil || out.FailedEntryCount != 1 || aws.ToString(out.Entries[0].ErrorCode) != "ThrottlingException" {
		t.Fatalf("second call: %+v, %v; want the entry failed with ThrottlingException", out, err)
	}
	if out, err = put(); err != nil || out.FailedEntryCount != 0 {
		t.Fatalf("third call: %+v, %v; want it accepted", out, err)
	}
	if got := filter(t, logs, &cloudwatchlogs.FilterLogEventsInput{}); len(got.Events) != 1 {
		t.Errorf("%d events kept, want only the accepted one", len(got.Events))
	}
	for _, bad := range []string{"events:error=", "events:times=2", "events:error=X:failed-entry=Y", "events:delay=1s", "debit:error=X"} {
		if _, err := eventbus.ParseFault(bad); err == nil {
			t.Errorf("ParseFault(%q) accepted", bad)
		}
	}
}

// TestEventsSurviveARestart: with a data directory the log group's events are read back by the next server, at
// most MaxEvents of them, the newest.
func TestEventsSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	srv, eb, _ := newServer(t, dir, 3)
	for i := range 5 {
		if _, err := eb.PutEvents(context.Background(), &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{
			entry("transferflow.transfers", fmt.Sprintf(`{"n":%d}`, i))}}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(srv.Events(group)); n != 3 {
		t.Fatalf("in memory: %d events, want the bound, 3", n)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	_, _, logs := newServer(t, dir, 3)
	got := filter(t, logs, &cloudwatchlogs.FilterLogEventsInput{})
	var ns []string
	for _, e := range got.Events {
		var ev struct{ Detail struct{ N int } }
		_ = json.Unmarshal([]byte(aws.ToString(e.Message)), &ev)
		ns = append(ns, fmt.Sprint(ev.Detail.N))
	}
	if strings.Join(ns, ",") != "2,3,4" {
		t.Fatalf("after a restart: events %v, want the newest three, 2,3,4", ns)
	}
}

// TestInProcessPutEventsAnswersAsHTTP: PutEvents called in-process (as the local engine's events:putEvents tasks do)
// answers every request exactly as the same request through the SDK and HTTP does (accepted entries, failed entries
// with their codes and messages, request-level errors with their codes and messages, injected faults) and keeps the
// same events.
func TestInProcessPutEventsAnswersAsHTTP(t *testing.T) {
	// One stopped clock for both: an entry without Time gets the server's time.
	now := func(o *eventbus.Options) {
		o.Now = func() time.Time { return time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC) }
	}
	viaHTTP, eb, httpLogs := newServer(t, "", 0, now)
	direct, _, directLogs := newServer(t, "", 0, now)
	ctx := context.Background()
	timed := entry("transferflow.transfers", `{"transferId":"tr_1"}`)
	timed.Time = aws.Time(time.Date(2026, 11, 23, 10, 0, 0, 250e6, time.UTC))
	timed.Resources = []string{"arn:aws:states:us-east-1:000000000000:execution:sm:tr_1"}
	timed.TraceHeader = aws.String("Root=1-5759e988-bd862e3fe1be46a994272793")
	noSource := entry("", `{"a":1}`)
	unknownBus := entry("transferflow.transfers", `{"a":1}`)
	unknownBus.EventBusName = aws.String("nope")
	requests := [][]ebtypes.PutEventsRequestEntry{
		{timed, entry("someone.else", `{"x":1}`)},
		{},
		make([]ebtypes.PutEventsRequestEntry, 11),
		{noSource, entry("transferflow.transfers", `[1]`), unknownBus, entry("transferflow.transfers", `{"ok":true}`)},
		{entry("transferflow.transfers", `{"fault":"error"}`)},
		{entry("transferflow.transfers", `{"fault":"failed-entry"}`)},
	}
	answer := func(out *eventbridge.PutEventsOutput, err error) string {
		var ae smithy.APIError
		if errors.As(err, &ae) {
			return "error " + ae.ErrorCode() + ": " + ae.ErrorMessage()
		}
		if err != nil {
			return "error " + err.Error()
		}
		for i := range out.Entries { // the ids differ: the HTTP server also draws one per answer for its request id
			if out.Entries[i].EventId != nil {
				out.Entries[i].EventId = aws.String("an id")
			}
		}
		b, _ := json.Marshal(struct {
			Failed  int32
			Entries []ebtypes.PutEventsResultEntry
		}{out.FailedEntryCount, out.Entries})
		return string(b)
	}
	for i, entries := range requests {
		if i == len(requests)-2 { // the faults, for the last two requests
			for _, srv := range []*eventbus.Server{viaHTTP, direct} {
				for _, spec := range []string{"events:error=InternalException:times=1", "events:failed-entry=ThrottlingException:times=1"} {
					f, err := eventbus.ParseFault(spec)
					if err != nil {
						t.Fatal(err)
					}
					srv.AddFault(f)
				}
			}
		}
		in := &eventbridge.PutEventsInput{Entries: entries}
		want := answer(eb.PutEvents(ctx, in))
		got := answer(direct.PutEvents(ctx, in))
		if got != want {
			t.Errorf("request %d: in-process answer\n  %s\nthrough HTTP\n  %s", i, got, want)
		}
	}
	h, d := filter(t, httpLogs, &cloudwatchlogs.FilterLogEventsInput{}), filter(t, directLogs, &cloudwatchlogs.FilterLogEventsInput{})
	if len(h.Events) != 2 || len(d.Events) != len(h.Events) {
		t.Fatalf("kept %d events in-process and %d through HTTP, want the 2 accepted ones matching the rule each", len(d.Events), len(h.Events))
	}
	withoutID := func(msg *string) string {
		var ev map[string]any
		if err := json.Unmarshal([]byte(aws.ToString(msg)), &ev); err != nil {
			t.Fatal(err)
		}
		delete(ev, "id")
		b, _ := json.Marshal(ev)
		return string(b)
	}
	for i := range h.Events {
		hm, dm := withoutID(h.Events[i].Message), withoutID(d.Events[i].Message)
		if dm != hm || aws.ToInt64(d.Events[i].Timestamp) != aws.ToInt64(h.Events[i].Timestamp) {
			t.Errorf("event %d in-process %s at %d, through HTTP %s at %d", i, dm, aws.ToInt64(d.Events[i].Timestamp), hm, aws.ToInt64(h.Events[i].Timestamp))
		}
	}
}
