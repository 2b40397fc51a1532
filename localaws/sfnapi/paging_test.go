package sfnapi_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// TestPagesAreStableWhileExecutionsStart pages through ListExecutions with the SDK's paginator, starting a new
// execution before each page: every execution that existed at the start is listed exactly once and nothing twice
// (with an offset as the token, each start moved the list by one and repeated an execution).
func TestPagesAreStableWhileExecutionsStart(t *testing.T) {
	srv := stepfunctions.RunT(t)
	c := srv.Client()
	smArn := create(t, c, "paged", passChoice)
	start := func(name string) { startAndWait(t, c, srv.Engine(), smArn, name) }
	var before []string
	for i := range 7 {
		name := fmt.Sprintf("old-%d", i)
		start(name)
		before = append(before, name)
	}
	seen := map[string]int{}
	p := sfn.NewListExecutionsPaginator(c, &sfn.ListExecutionsInput{StateMachineArn: aws.String(smArn), MaxResults: 2})
	eachPage(t, p, 10, func(page int, out *sfn.ListExecutionsOutput) {
		for _, e := range out.Executions {
			seen[aws.ToString(e.Name)]++
		}
		start(fmt.Sprintf("new-%d", page))
	})
	for _, name := range before {
		if seen[name] != 1 {
			t.Errorf("%s listed %d times, want once", name, seen[name])
		}
	}
	for name, n := range seen {
		if n != 1 {
			t.Errorf("%s listed %d times", name, n)
		}
	}
}

// TestStateMachinePagesAreStable creates state machines between the pages of ListStateMachines: those that existed
// are listed once each, one named after the last listed appears, one named before it does not repeat anything.
func TestStateMachinePagesAreStable(t *testing.T) {
	srv := stepfunctions.RunT(t)
	c := srv.Client()
	for i := range 5 {
		create(t, c, fmt.Sprintf("m%d", i), passChoice)
	}
	seen := map[string]int{}
	p := sfn.NewListStateMachinesPaginator(c, &sfn.ListStateMachinesInput{MaxResults: 2})
	eachPage(t, p, 10, func(page int, out *sfn.ListStateMachinesOutput) {
		for _, sm := range out.StateMachines {
			seen[aws.ToString(sm.Name)]++
		}
		if page == 0 {
			create(t, c, "a-before", passChoice) // sorts before every listed one: a later page does not show it
			create(t, c, "z-after", passChoice)  // sorts after: the last page shows it
		}
	})
	want := map[string]int{"m0": 1, "m1": 1, "m2": 1, "m3": 1, "m4": 1, "z-after": 1}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("listed %v, want %v", seen, want)
	}
}

// TestHistoryPagesInBothOrders pages a running execution's history forwards and backwards while it records more
// events between pages.
func TestHistoryPagesInBothOrders(t *testing.T) {
	srv, clock := runClocked(t)
	c := srv.Client()
	ctx := context.Background()
	def := `{"StartAt":"W1","States":{
	  "W1":{"Type":"Wait","Seconds":10,"Next":"W2"},
	  "W2":{"Type":"Wait","Seconds":10,"Next":"W3"},
	  "W3":{"Type":"Wait","Seconds":10,"End":true}}}`
	smArn := create(t, c, "waits", def)
	out, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn)})
	if err != nil {
		t.Fatal(err)
	}
	arn := out.ExecutionArn
	clock.MustAwaitWaiters(t, 1)
	for _, reverse := range []bool{false, true} {
		t.Run(fmt.Sprint("reverse=", reverse), func(t *testing.T) {
			p := sfn.NewGetExecutionHistoryPaginator(c, &sfn.GetExecutionHistoryInput{ExecutionArn: arn, MaxResults: 1, ReverseOrder: reverse})
			var ids []int64
			eachPage(t, p, 20, func(page int, h *sfn.GetExecutionHistoryOutput) {
				for _, e := range h.Events {
					ids = append(ids, e.Id)
				}
				if page == 0 && !reverse {
					clock.Advance(10 * time.Second) // W1 exits, W2 enters: two events after the anchor
					clock.MustAwaitWaiters(t, 1)
				}
				if page == 0 && reverse {
					clock.Advance(10 * time.Second) // W2 exits, W3 enters: newer than the anchor, not listed again
					clock.MustAwaitWaiters(t, 1)
				}
			})
			switch {
			case !reverse && fmt.Sprint(ids) != "[1 2 3 4]":
				t.Fatalf("forward ids %v, want [1 2 3 4]", ids)
			case reverse && fmt.Sprint(ids) != "[4 3 2 1]":
				t.Fatalf("reverse ids %v, want [4 3 2 1]", ids)
			}
		})
	}
}

// TestInvalidPageTokens: a token that is garbage, issued by another operation, for another resource or other
// filters, or older than 24 hours is InvalidToken.
func TestInvalidPageTokens(t *testing.T) {
	srv, clock := runClocked(t)
	c := srv.Client()
	ctx := context.Background()
	a := create(t, c, "a", waitForever)
	b := create(t, c, "b", waitForever)
	for i := range 3 {
		for _, sm := range []string{a, b} {
			if _, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Name: aws.String(fmt.Sprint("x", i))}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("act1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("act2")}); err != nil {
		t.Fatal(err)
	}
	execPage, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(a), MaxResults: 1})
	if err != nil || execPage.NextToken == nil {
		t.Fatalf("first page: %v, token %v", err, execPage)
	}
	smPage, err := c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{MaxResults: 1})
	if err != nil || smPage.NextToken == nil {
		t.Fatalf("first page: %v, token %v", err, smPage)
	}
	tok := execPage.NextToken
	tests := []struct {
		name string
		call func() error
	}{
		{"garbage", func() error {
			return errOf(c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(a), NextToken: aws.String("bm90IGEgdG9rZW4")}))
		}},
		{"another state machine", func() error {
			return errOf(c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(b), NextToken: tok}))
		}},
		{"another status filter", func() error {
			return errOf(c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(a), StatusFilter: types.ExecutionStatusRunning, NextToken: tok}))
		}},
		{"another operation", func() error {
			return errOf(c.ListActivities(ctx, &sfn.ListActivitiesInput{NextToken: smPage.NextToken}))
		}},
		{"history token of a list", func() error {
			return errOf(c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: execPage.Executions[0].ExecutionArn, NextToken: tok}))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var it *types.InvalidToken
			if err := tc.call(); !errors.As(err, &it) {
				t.Fatalf("got %v, want InvalidToken", err)
			}
		})
	}
	// The token still works for what it was issued for, until it is 24 hours old.
	if _, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(a), NextToken: tok}); err != nil {
		t.Fatalf("valid token: %v", err)
	}
	clock.Advance(24*time.Hour + time.Second)
	_, err = c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(a), NextToken: tok})
	var it *types.InvalidToken
	if !errors.As(err, &it) {
		t.Fatalf("expired token: %v, want InvalidToken", err)
	}
}
