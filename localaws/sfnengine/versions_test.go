package sfnengine_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// passResult is a definition whose output is result.
func passResult(result string) string {
	return `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":"` + result + `","End":true}}}`
}

func mustCreate(t *testing.T, eng *sfnengine.Engine, in sfnengine.CreateInput) sfnengine.StateMachine {
	t.Helper()
	if in.RoleArn == "" {
		in.RoleArn = "arn:aws:iam::123456789012:role/sfn"
	}
	sm, err := eng.CreateStateMachine(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return sm
}

func mustPublish(t *testing.T, eng *sfnengine.Engine, arn, definition string) sfnengine.StateMachineVersion {
	t.Helper()
	_, v, err := eng.Update(context.Background(), sfnengine.UpdateInput{StateMachineArn: arn, Definition: definition, Publish: true})
	if err != nil {
		t.Fatal(err)
	}
	return *v
}

// runOutput starts an execution of arn and returns its output and its record.
func runOutput(t *testing.T, eng *sfnengine.Engine, arn string) (string, *sfnengine.ExecutionRecord) {
	t.Helper()
	ctx := context.Background()
	rec, err := eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: arn})
	if err != nil {
		t.Fatal(err)
	}
	done, err := eng.Wait(ctx, rec.Arn)
	if err != nil {
		t.Fatal(err)
	}
	if done.Output == nil {
		t.Fatalf("%s ended %s without output", rec.Arn, done.Status)
	}
	return *done.Output, done
}

// TestVersionNumbersAndRevisions: versions are numbered from 1 and numbers are not used again after a deletion;
// an update that changes nothing keeps the revision, so publishing again returns the same version.
func TestVersionNumbersAndRevisions(t *testing.T) {
	ctx := context.Background()
	eng := sfnengine.New(sfnengine.Options{})
	defer eng.Close()
	sm := mustCreate(t, eng, sfnengine.CreateInput{Name: "sm", Definition: passResult("v1"),
		CreateOptions: sfnengine.CreateOptions{Publish: true, VersionDescription: "first"}})
	if len(sm.Versions) != 1 || sm.Versions[0].Arn != sm.Arn+":1" || sm.Versions[0].Description != "first" || sm.RevisionID != "" {
		t.Fatalf("created = %+v", sm)
	}
	v2 := mustPublish(t, eng, sm.Arn, passResult("v2"))
	same := mustPublish(t, eng, sm.Arn, passResult("v2"))
	if v2.Arn != sm.Arn+":2" || same.Arn != v2.Arn || !same.CreationDate.Equal(v2.CreationDate) {
		t.Fatalf("published %s, then %s for the same revision", v2.Arn, same.Arn)
	}
	if err := eng.DeleteStateMachineVersion(ctx, v2.Arn); err != nil {
		t.Fatal(err)
	}
	if v3 := mustPublish(t, eng, sm.Arn, passResult("v3")); v3.Arn != sm.Arn+":3" {
		t.Fatalf("after deleting version 2, published %s, want version 3", v3.Arn)
	}
	vs, err := eng.ListStateMachineVersions(ctx, sm.Arn)
	if err != nil || len(vs) != 2 || vs[0].Version != 3 || vs[1].Version != 1 {
		t.Fatalf("versions = %v %+v", err, vs)
	}
	if _, err := eng.PublishStateMachineVersion(ctx, sm.Arn, "", "INITIAL"); !errors.Is(err, sfnengine.ErrConflict) {
		t.Fatalf("publish of the initial revision after updates: %v, want ErrConflict", err)
	}
}

// TestAliasRoutesByWeight: an alias with two versions runs each about as often as its weight says; a version
// weighted 0 never runs.
func TestAliasRoutesByWeight(t *testing.T) {
	ctx := context.Background()
	eng := sfnengine.New(sfnengine.Options{})
	defer eng.Close()
	sm := mustCreate(t, eng, sfnengine.CreateInput{Name: "sm", Definition: passResult("v1"),
		CreateOptions: sfnengine.CreateOptions{Publish: true}})
	v2 := mustPublish(t, eng, sm.Arn, passResult("v2"))
	alias, err := eng.CreateStateMachineAlias(ctx, "live", "", []sfnengine.Route{{VersionArn: sm.Arn + ":1", Weight: 50}, {VersionArn: v2.Arn, Weight: 50}})
	if err != nil {
		t.Fatal(err)
	}
	ran := map[string]int{}
	for range 200 {
		out, rec := runOutput(t, eng, alias.Arn)
		if rec.StateMachineAliasArn != alias.Arn || rec.StateMachineVersionArn != sm.Arn+":"+out[2:3] {
			t.Fatalf("execution of the alias: output %s, version %s, alias %s", out, rec.StateMachineVersionArn, rec.StateMachineAliasArn)
		}
		ran[out]++
	}
	// Each count is binomial(200, 0.5): below 60 with a probability under 1e-8.
	if ran[`"v1"`] < 60 || ran[`"v2"`] < 60 {
		t.Fatalf("50/50 alias ran %v", ran)
	}
	zero := []sfnengine.Route{{VersionArn: sm.Arn + ":1", Weight: 0}, {VersionArn: v2.Arn, Weight: 100}}
	if _, err := eng.UpdateStateMachineAlias(ctx, alias.Arn, nil, zero); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if out, _ := runOutput(t, eng, alias.Arn); out != `"v2"` {
			t.Fatalf("a version weighted 0 ran: %s", out)
		}
	}
}

// TestVersionAndAliasQuotas: the 1001st version and the 101st alias are refused with ErrQuotaExceeded.
func TestVersionAndAliasQuotas(t *testing.T) {
	ctx := context.Background()
	eng := sfnengine.New(sfnengine.Options{})
	defer eng.Close()
	sm := mustCreate(t, eng, sfnengine.CreateInput{Name: "sm", Definition: passResult("v0")})
	for i := range sfnengine.MaxVersions {
		mustPublish(t, eng, sm.Arn, passResult(fmt.Sprint("v", i+1)))
	}
	_, _, err := eng.Update(ctx, sfnengine.UpdateInput{StateMachineArn: sm.Arn, Definition: passResult("over"), Publish: true})
	if !errors.Is(err, sfnengine.ErrQuotaExceeded) {
		t.Fatalf("version %d: %v, want ErrQuotaExceeded", sfnengine.MaxVersions+1, err)
	}
	if d, _ := eng.DescribeStateMachine(ctx, sm.Arn); d.Definition != passResult(fmt.Sprint("v", sfnengine.MaxVersions)) {
		t.Fatalf("a refused update with publish changed the definition to %s", d.Definition)
	}
	route := []sfnengine.Route{{VersionArn: sm.Arn + ":1", Weight: 100}}
	for i := range sfnengine.MaxAliases {
		if _, err := eng.CreateStateMachineAlias(ctx, fmt.Sprint("a", i), "", route); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := eng.CreateStateMachineAlias(ctx, "over", "", route); !errors.Is(err, sfnengine.ErrQuotaExceeded) {
		t.Fatalf("alias %d: %v, want ErrQuotaExceeded", sfnengine.MaxAliases+1, err)
	}
}

// TestVersionsAndAliasesAcrossRestart: versions, aliases and the version and alias of a running execution survive
// a restart on a FileStore; the execution resumes on its version's definition, not the state machine's current
// one; a deleted state machine stays deleted.
func TestVersionsAndAliasesAcrossRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clock := sfnengine.NewManualClock(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	files := fileStore(t, dir)
	first := sfnengine.New(sfnengine.Options{Store: files, Clock: clock, CheckpointEveryState: true})
	waitThen := `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":60,"Next":"P"},"P":{"Type":"Pass","Result":"v1","End":true}}}`
	sm := mustCreate(t, first, sfnengine.CreateInput{Name: "sm", Definition: waitThen, CreateOptions: sfnengine.CreateOptions{Publish: true}})
	gone := mustCreate(t, first, sfnengine.CreateInput{Name: "gone", Definition: passResult("x"), CreateOptions: sfnengine.CreateOptions{Publish: true}})
	alias, err := first.CreateStateMachineAlias(ctx, "prod", "production", []sfnengine.Route{{VersionArn: sm.Arn + ":1", Weight: 100}})
	if err != nil {
		t.Fatal(err)
	}
	mustPublish(t, first, sm.Arn, passResult("v2"))
	if err := first.DeleteStateMachine(ctx, gone.Arn); err != nil {
		t.Fatal(err)
	}
	rec, err := first.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: alias.Arn, Name: "run"})
	if err != nil {
		t.Fatal(err)
	}
	clock.MustAwaitWaiters(t, 1) // the execution waits in W, its checkpoint saved
	first.Close()
	before, _ := clock.Waiters() // the first engine's timer stays pending on the shared clock

	files2 := fileStore(t, dir)
	second := sfnengine.New(sfnengine.Options{Store: files2, Clock: clock, CheckpointEveryState: true})
	defer second.Close()
	if err := second.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := second.DescribeStateMachine(ctx, gone.Arn); !errors.Is(err, sfnengine.ErrStateMachineDoesNotExist) {
		t.Fatalf("deleted state machine after the restart: %v", err)
	}
	a, err := second.DescribeStateMachineAlias(ctx, alias.Arn)
	if err != nil || a.Description != "production" || len(a.Routing) != 1 || a.Routing[0].VersionArn != sm.Arn+":1" {
		t.Fatalf("alias after the restart = %v %+v", err, a)
	}
	vs, err := second.ListStateMachineVersions(ctx, sm.Arn)
	if err != nil || len(vs) != 2 || vs[0].Definition != passResult("v2") || vs[1].Definition != waitThen {
		t.Fatalf("versions after the restart = %v %+v", err, vs)
	}
	clock.MustAwaitWaiters(t, before+1) // the resumed execution waits in W again
	clock.Advance(time.Minute)
	done, err := second.Wait(ctx, rec.Arn)
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != sfnengine.StatusSucceeded || *done.Output != `"v1"` || done.StateMachineVersionArn != sm.Arn+":1" ||
		done.StateMachineAliasArn != alias.Arn || done.StateMachineArn != sm.Arn {
		t.Fatalf("resumed execution = %s %v, version %s, alias %s, state machine %s", done.Status, done.Output,
			done.StateMachineVersionArn, done.StateMachineAliasArn, done.StateMachineArn)
	}
}

// brokenDiskStore is a MemoryStore whose state machine saves fail while failing is set.
type brokenDiskStore struct {
	*sfnengine.MemoryStore
	failing bool
}

func (s *brokenDiskStore) SaveStateMachine(ctx context.Context, sm sfnengine.StateMachine) error {
	if s.failing {
		return errors.New("disk full")
	}
	return s.MemoryStore.SaveStateMachine(ctx, sm)
}

// TestFailedSaveChangesNothing: when the Store cannot save a state machine, a tag, a version, an alias or an
// update is an error and the engine keeps the state machine as it was.
func TestFailedSaveChangesNothing(t *testing.T) {
	ctx := context.Background()
	store := &brokenDiskStore{MemoryStore: sfnengine.NewMemoryStore()}
	eng := sfnengine.New(sfnengine.Options{Store: store})
	defer eng.Close()
	sm := mustCreate(t, eng, sfnengine.CreateInput{Name: "sm", Definition: passResult("v1"), Tags: map[string]string{"a": "1"},
		CreateOptions: sfnengine.CreateOptions{Publish: true}})
	store.failing = true
	route := []sfnengine.Route{{VersionArn: sm.Arn + ":1", Weight: 100}}
	for name, call := range map[string]func() error{
		"tag":   func() error { return eng.TagResource(ctx, sm.Arn, map[string]string{"b": "2"}) },
		"untag": func() error { return eng.UntagResource(ctx, sm.Arn, []string{"a"}) },
		"publish": func() error {
			_, _, err := eng.Update(ctx, sfnengine.UpdateInput{StateMachineArn: sm.Arn, Definition: passResult("v2"), Publish: true})
			return err
		},
		"alias": func() error {
			_, err := eng.CreateStateMachineAlias(ctx, "prod", "", route)
			return err
		},
		"delete version": func() error { return eng.DeleteStateMachineVersion(ctx, sm.Arn+":1") },
	} {
		if err := call(); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("%s with a failing store: %v", name, err)
		}
	}
	got, err := eng.DescribeStateMachine(ctx, sm.Arn)
	if err != nil || !reflect.DeepEqual(got, sm) {
		t.Fatalf("after failed saves:\n got %+v\nwant %+v", got, sm)
	}
	if aliases, err := eng.ListStateMachineAliases(ctx, sm.Arn); err != nil || len(aliases) != 0 {
		t.Fatalf("aliases after a failed save = %v %v", err, aliases)
	}
}

// TestCreateStateMachineIdempotency: creating a state machine again with the same definition, type, configuration
// and publish request returns it, even with another role or other tags (which are not applied, as on AWS); another
// configuration or publish request is ErrStateMachineExists.
func TestCreateStateMachineIdempotency(t *testing.T) {
	ctx := context.Background()
	eng := sfnengine.New(sfnengine.Options{})
	defer eng.Close()
	in := sfnengine.CreateInput{Name: "sm", Definition: passResult("v1"), Tags: map[string]string{"a": "1"},
		Config: sfnengine.Config{Tracing: &sfnengine.TracingConfiguration{Enabled: true}}}
	first := mustCreate(t, eng, in)
	again := in
	again.RoleArn, again.Tags = "arn:aws:iam::123456789012:role/other", map[string]string{"b": "2"}
	got, err := eng.CreateStateMachine(ctx, again)
	if err != nil || !reflect.DeepEqual(got, first) {
		t.Fatalf("create again with another role and tags = %v %+v", err, got)
	}
	for name, change := range map[string]func(*sfnengine.CreateInput){
		"tracing":    func(c *sfnengine.CreateInput) { c.Config = sfnengine.Config{} },
		"publish":    func(c *sfnengine.CreateInput) { c.Publish = true },
		"definition": func(c *sfnengine.CreateInput) { c.Definition = passResult("v2") },
	} {
		other := in
		change(&other)
		if _, err := eng.CreateStateMachine(ctx, other); !errors.Is(err, sfnengine.ErrStateMachineExists) {
			t.Errorf("create again with another %s: %v, want ErrStateMachineExists", name, err)
		}
	}
	same := in
	same.Config = sfnengine.Config{Tracing: &sfnengine.TracingConfiguration{Enabled: true}, Logging: &sfnengine.LoggingConfiguration{Level: sfnengine.LogLevelOff}}
	if _, err := eng.CreateStateMachine(ctx, same); err != nil {
		t.Fatalf("create again with the default logging spelled out: %v", err)
	}
}
