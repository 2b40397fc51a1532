package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/transferflow/orchestrator/localaws/eventbus"
	"github.com/transferflow/orchestrator/localaws/eventpattern"
)

// eventsServer is a local EventBridge with the template's rule (source transferflow.transfers to the local log
// group), holding a completed and a failed transfer's events published through the real SDK at the harness's time.
func eventsServer(t *testing.T, h *harness) string {
	t.Helper()
	p, err := eventpattern.Compile(map[string]any{"source": []any{"transferflow.transfers"}})
	if err != nil {
		t.Fatal(err)
	}
	bus, err := eventbus.New(eventbus.Options{Region: "us-east-1", AccountID: "000000000000", Buses: []string{"TransferEventBus"},
		Rules: []eventbus.Rule{{Name: "r", EventBusName: "TransferEventBus", Pattern: p, LogGroups: []string{defaultEventsLogGroup}}},
		NewID: func() string { return "id" },
		Now:   h.clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(bus)
	t.Cleanup(srv.Close)
	eb := eventbridge.New(eventbridge.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: aws.AnonymousCredentials{}})
	for _, e := range []struct{ dt, detail string }{
		{"Transfer Completed", `{"transferId":"tr_1","status":"COMPLETED","sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":1250,"currency":"EUR"}`},
		{"Transfer Failed", `{"transferId":"tr_2","status":"FAILED","sourceAccountId":"acc-bob","destinationAccountId":"acc-alice","amount":9,"currency":"EUR","failure":{"code":"INSUFFICIENT_FUNDS","message":"m\u001b[31m"}}`},
	} {
		_, err := eb.PutEvents(context.Background(), &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{{
			EventBusName: aws.String("TransferEventBus"), Source: aws.String("transferflow.transfers"), DetailType: aws.String(e.dt),
			Detail: aws.String(e.detail), Time: aws.Time(h.clock.Now().Add(-time.Minute))}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	return srv.URL
}

// TestEventsTail: text lines with the failure code, JSON keeping the raw events, --since, and the exit codes of a
// missing log group and a server that does not answer.
func TestEventsTail(t *testing.T) {
	h := newHarness(t, nil)
	url := eventsServer(t, h)
	if code := h.run("events", "tail", "--events-endpoint", url); code != exitOK {
		t.Fatalf("exit %d: %s", code, h.stderr.String())
	}
	want := "2026-11-21T09:59:00Z  Transfer Completed  tr_1  COMPLETED  1250 EUR  acc-alice -> acc-bob\n" +
		"2026-11-21T09:59:00Z  Transfer Failed     tr_2  FAILED     9 EUR  acc-bob -> acc-alice  INSUFFICIENT_FUNDS\n"
	if h.stdout.String() != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", h.stdout.String(), want)
	}

	h.env["TRANSFERCTL_EVENTS_ENDPOINT"] = url
	if code := h.run("events", "tail", "--output", "json"); code != exitOK {
		t.Fatalf("exit %d: %s", code, h.stderr.String())
	}
	var raw []map[string]any
	if err := json.Unmarshal(h.stdout.Bytes(), &raw); err != nil || len(raw) != 2 || raw[1]["detail-type"] != "Transfer Failed" {
		t.Fatalf("json output %s (%v)", h.stdout.String(), err)
	}
	if d, _ := raw[1]["detail"].(map[string]any); d["failure"].(map[string]any)["message"] != "m\u001b[31m" {
		t.Errorf("JSON must keep the raw event: %v", d)
	}

	if code := h.run("events", "tail", "--since", "30s", "--output", "json"); code != exitOK || strings.TrimSpace(h.stdout.String()) != "[]" {
		t.Errorf("--since 30s: exit %d, %s; want no events (they are a minute old)", code, h.stdout.String())
	}
	if code := h.run("events", "tail", "--log-group", "/aws/events/nope"); code != exitNotFound || !strings.Contains(h.stderr.String(), "--log-group") {
		t.Errorf("missing log group: exit %d, %s; want 5 and a hint", code, h.stderr.String())
	}
	if code := h.run("events", "tail", "--events-endpoint", "http://127.0.0.1:1"); code != exitUnavailable {
		t.Errorf("no server: exit %d, want 6; %s", code, h.stderr.String())
	}
}

func TestEventsUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"events"}, "one subcommand, tail"},
		{[]string{"events", "follow"}, "one subcommand, tail"},
		{[]string{"events", "tail", "--since", "-1h"}, "--since must be positive"},
		{[]string{"events", "tail", "--log-group", ""}, "--log-group must not be empty"},
		{[]string{"events", "tail", "--events-endpoint", "http://events.example.com"}, "plain http is allowed only to loopback"},
		{[]string{"events", "tail", "--events-endpoint", "ftp://x"}, "want http(s)://host:port"},
	} {
		h := newHarness(t, nil)
		if code := h.run(tc.args...); code != exitUsage || !strings.Contains(h.stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, h.stderr.String(), tc.want)
		}
	}
}
