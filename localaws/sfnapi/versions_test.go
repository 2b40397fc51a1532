package sfnapi_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

func passResult(result string) string {
	return `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":"` + result + `","End":true}}}`
}

// createPublished creates the state machine name with def and publishes it as version 1; it returns the state
// machine's ARN and the version's.
func createPublished(t *testing.T, c *sfn.Client, name, def string) (arn, version string) {
	t.Helper()
	created, err := c.CreateStateMachine(context.Background(), &sfn.CreateStateMachineInput{Name: aws.String(name), Definition: aws.String(def),
		RoleArn: aws.String(role), Publish: true})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(created.StateMachineArn), aws.ToString(created.StateMachineVersionArn)
}

// TestVersions: publish on create and on update, PublishStateMachineVersion with its revision check and its
// idempotency, DescribeStateMachine and StartExecution on a version ARN, ListStateMachineVersions,
// DeleteStateMachineVersion.
func TestVersions(t *testing.T) {
	srv := stepfunctions.RunT(t, stepfunctions.WithClock(sfnengine.NewManualClock(time.Unix(1_700_000_000, 0))))
	c := srv.Client()
	ctx := context.Background()
	created, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("sm"), Definition: aws.String(passResult("v1")),
		RoleArn: aws.String(role), Publish: true, VersionDescription: aws.String("first")})
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(created.StateMachineArn)
	v1 := arn + ":1"
	if got := aws.ToString(created.StateMachineVersionArn); got != v1 {
		t.Fatalf("stateMachineVersionArn = %s, want %s", got, v1)
	}
	d, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(v1)})
	if err != nil || aws.ToString(d.StateMachineArn) != v1 || aws.ToString(d.Description) != "first" || aws.ToString(d.Definition) != passResult("v1") {
		t.Fatalf("DescribeStateMachine of version 1 = %v %+v", err, d)
	}
	upd, err := c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(arn), Definition: aws.String(passResult("v2"))})
	if err != nil || aws.ToString(upd.RevisionId) == "" || upd.StateMachineVersionArn != nil {
		t.Fatalf("UpdateStateMachine = %v %+v", err, upd)
	}
	d, err = c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(arn)})
	if err != nil || aws.ToString(d.RevisionId) != aws.ToString(upd.RevisionId) {
		t.Fatalf("revisionId = %v %s, want %s", err, aws.ToString(d.RevisionId), aws.ToString(upd.RevisionId))
	}
	var conflict *types.ConflictException
	for _, rev := range []string{"INITIAL", "other"} {
		_, err = c.PublishStateMachineVersion(ctx, &sfn.PublishStateMachineVersionInput{StateMachineArn: aws.String(arn), RevisionId: aws.String(rev)})
		if !errors.As(err, &conflict) {
			t.Fatalf("publish with revision %s: %v, want ConflictException", rev, err)
		}
	}
	p2, err := c.PublishStateMachineVersion(ctx, &sfn.PublishStateMachineVersionInput{StateMachineArn: aws.String(arn),
		RevisionId: upd.RevisionId, Description: aws.String("second")})
	if err != nil || aws.ToString(p2.StateMachineVersionArn) != arn+":2" {
		t.Fatalf("publish = %v %+v", err, p2)
	}
	again, err := c.PublishStateMachineVersion(ctx, &sfn.PublishStateMachineVersionInput{StateMachineArn: aws.String(arn)})
	if err != nil || aws.ToString(again.StateMachineVersionArn) != arn+":2" || !again.CreationDate.Equal(*p2.CreationDate) {
		t.Fatalf("publishing the same revision again = %v %+v, want version 2", err, again)
	}
	u3, err := c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(arn), Definition: aws.String(passResult("v3")), Publish: true})
	if err != nil || aws.ToString(u3.StateMachineVersionArn) != arn+":3" {
		t.Fatalf("update with publish = %v %+v", err, u3)
	}
	list, err := c.ListStateMachineVersions(ctx, &sfn.ListStateMachineVersionsInput{StateMachineArn: aws.String(arn), MaxResults: 2})
	if err != nil || len(list.StateMachineVersions) != 2 || aws.ToString(list.StateMachineVersions[0].StateMachineVersionArn) != arn+":3" || list.NextToken == nil {
		t.Fatalf("ListStateMachineVersions = %v %+v", err, list)
	}
	rest, err := c.ListStateMachineVersions(ctx, &sfn.ListStateMachineVersionsInput{StateMachineArn: aws.String(arn), NextToken: list.NextToken})
	if err != nil || len(rest.StateMachineVersions) != 1 || aws.ToString(rest.StateMachineVersions[0].StateMachineVersionArn) != v1 {
		t.Fatalf("ListStateMachineVersions page 2 = %v %+v", err, rest)
	}

	for _, tc := range []struct{ arn, output, version string }{{v1, `"v1"`, v1}, {arn + ":2", `"v2"`, arn + ":2"}, {arn, `"v3"`, ""}} {
		e := run(t, srv, tc.arn)
		if aws.ToString(e.Output) != tc.output || aws.ToString(e.StateMachineArn) != arn || aws.ToString(e.StateMachineVersionArn) != tc.version || e.StateMachineAliasArn != nil {
			t.Fatalf("execution of %s: output %s, stateMachineArn %s, version %s, alias %v", tc.arn, aws.ToString(e.Output),
				aws.ToString(e.StateMachineArn), aws.ToString(e.StateMachineVersionArn), e.StateMachineAliasArn)
		}
		f, err := c.DescribeStateMachineForExecution(ctx, &sfn.DescribeStateMachineForExecutionInput{ExecutionArn: e.ExecutionArn})
		if err != nil || aws.ToString(f.Definition) != passResult(tc.output[1:3]) || aws.ToString(f.StateMachineArn) != arn {
			t.Fatalf("DescribeStateMachineForExecution of a %s execution = %v %+v", tc.arn, err, f)
		}
	}

	if _, err := c.DeleteStateMachineVersion(ctx, &sfn.DeleteStateMachineVersionInput{StateMachineVersionArn: aws.String(v1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteStateMachineVersion(ctx, &sfn.DeleteStateMachineVersionInput{StateMachineVersionArn: aws.String(v1)}); err != nil {
		t.Fatalf("deleting a deleted version: %v, want no error", err)
	}
	var notExist *types.StateMachineDoesNotExist
	if _, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(v1)}); !errors.As(err, &notExist) {
		t.Fatalf("describe a deleted version: %v", err)
	}
	if _, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(v1)}); !errors.As(err, &notExist) {
		t.Fatalf("start a deleted version: %v", err)
	}
}

// TestAliases: CreateStateMachineAlias (idempotent, ConflictException otherwise), DescribeStateMachineAlias,
// StartExecution on an alias, UpdateStateMachineAlias, ListStateMachineAliases by state machine and by version,
// DeleteStateMachineVersion refused while an alias routes to it, DeleteStateMachineAlias, and DeleteStateMachine
// taking its versions and aliases with it.
func TestAliases(t *testing.T) {
	srv := stepfunctions.RunT(t, stepfunctions.WithClock(sfnengine.NewManualClock(time.Unix(1_700_000_000, 0))))
	c := srv.Client()
	ctx := context.Background()
	arn, v1 := createPublished(t, c, "sm", passResult("v1"))
	u, err := c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(arn), Definition: aws.String(passResult("v2")), Publish: true})
	if err != nil {
		t.Fatal(err)
	}
	v2 := aws.ToString(u.StateMachineVersionArn)
	only := func(v string) []types.RoutingConfigurationListItem {
		return []types.RoutingConfigurationListItem{{StateMachineVersionArn: aws.String(v), Weight: 100}}
	}
	a, err := c.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String("prod"), Description: aws.String("live"), RoutingConfiguration: only(v1)})
	if err != nil || aws.ToString(a.StateMachineAliasArn) != arn+":prod" {
		t.Fatalf("CreateStateMachineAlias = %v %+v", err, a)
	}
	alias := aws.ToString(a.StateMachineAliasArn)
	same, err := c.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String("prod"), Description: aws.String("live"), RoutingConfiguration: only(v1)})
	if err != nil || aws.ToString(same.StateMachineAliasArn) != alias || !same.CreationDate.Equal(*a.CreationDate) {
		t.Fatalf("the same CreateStateMachineAlias again = %v %+v", err, same)
	}
	var conflict *types.ConflictException
	if _, err := c.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String("prod"), RoutingConfiguration: only(v2)}); !errors.As(err, &conflict) {
		t.Fatalf("another alias of that name: %v, want ConflictException", err)
	}
	d, err := c.DescribeStateMachineAlias(ctx, &sfn.DescribeStateMachineAliasInput{StateMachineAliasArn: aws.String(alias)})
	if err != nil || aws.ToString(d.Name) != "prod" || aws.ToString(d.Description) != "live" || len(d.RoutingConfiguration) != 1 ||
		aws.ToString(d.RoutingConfiguration[0].StateMachineVersionArn) != v1 || d.RoutingConfiguration[0].Weight != 100 {
		t.Fatalf("DescribeStateMachineAlias = %v %+v", err, d)
	}
	e := run(t, srv, alias)
	if aws.ToString(e.Output) != `"v1"` || aws.ToString(e.StateMachineAliasArn) != alias || aws.ToString(e.StateMachineVersionArn) != v1 {
		t.Fatalf("execution of the alias: output %s, alias %s, version %s", aws.ToString(e.Output), aws.ToString(e.StateMachineAliasArn), aws.ToString(e.StateMachineVersionArn))
	}
	_, events := historyTypes(t, c, aws.ToString(e.ExecutionArn))
	if sd := events[0].ExecutionStartedEventDetails; sd == nil || aws.ToString(sd.StateMachineAliasArn) != alias || aws.ToString(sd.StateMachineVersionArn) != v1 {
		t.Fatalf("ExecutionStarted details = %+v", sd)
	}
	direct := run(t, srv, v1)
	executions := func(arn string) []string {
		t.Helper()
		out, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(arn)})
		if err != nil {
			t.Fatalf("ListExecutions %s: %v", arn, err)
		}
		var s []string
		for _, x := range out.Executions {
			s = append(s, aws.ToString(x.ExecutionArn)+" "+aws.ToString(x.StateMachineVersionArn)+" "+aws.ToString(x.StateMachineAliasArn))
		}
		return s
	}
	viaAlias := aws.ToString(e.ExecutionArn) + " " + v1 + " " + alias
	viaVersion := aws.ToString(direct.ExecutionArn) + " " + v1 + " "
	if got := executions(alias); len(got) != 1 || got[0] != viaAlias {
		t.Fatalf("executions of the alias = %q", got)
	}
	if got := executions(v1); len(got) != 2 || !slices.Contains(got, viaAlias) || !slices.Contains(got, viaVersion) {
		t.Fatalf("executions of version 1 = %q", got)
	}
	if got := executions(arn); len(got) != 2 {
		t.Fatalf("executions of the state machine = %q", got)
	}
	if _, err := c.DeleteStateMachineVersion(ctx, &sfn.DeleteStateMachineVersionInput{StateMachineVersionArn: aws.String(v1)}); !errors.As(err, &conflict) {
		t.Fatalf("deleting a version an alias routes to: %v, want ConflictException", err)
	}
	if _, err := c.UpdateStateMachineAlias(ctx, &sfn.UpdateStateMachineAliasInput{StateMachineAliasArn: aws.String(alias), RoutingConfiguration: only(v2)}); err != nil {
		t.Fatal(err)
	}
	if e := run(t, srv, alias); aws.ToString(e.Output) != `"v2"` || aws.ToString(e.StateMachineVersionArn) != v2 {
		t.Fatalf("execution of the updated alias: output %s, version %s", aws.ToString(e.Output), aws.ToString(e.StateMachineVersionArn))
	}
	if _, err := c.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String("beta"), RoutingConfiguration: only(v1)}); err != nil {
		t.Fatal(err)
	}
	names := func(in *sfn.ListStateMachineAliasesInput) []string {
		t.Helper()
		out, err := c.ListStateMachineAliases(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, a := range out.StateMachineAliases {
			s = append(s, aws.ToString(a.StateMachineAliasArn))
		}
		return s
	}
	if got := names(&sfn.ListStateMachineAliasesInput{StateMachineArn: aws.String(arn)}); len(got) != 2 || got[0] != arn+":beta" || got[1] != alias {
		t.Fatalf("aliases = %v", got)
	}
	if got := names(&sfn.ListStateMachineAliasesInput{StateMachineArn: aws.String(v2)}); len(got) != 1 || got[0] != alias {
		t.Fatalf("aliases of version 2 = %v", got)
	}
	if _, err := c.DeleteStateMachineAlias(ctx, &sfn.DeleteStateMachineAliasInput{StateMachineAliasArn: aws.String(arn + ":beta")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteStateMachineVersion(ctx, &sfn.DeleteStateMachineVersionInput{StateMachineVersionArn: aws.String(v1)}); err != nil {
		t.Fatalf("deleting a version no alias routes to any more: %v", err)
	}
	var notFound *types.ResourceNotFound
	if _, err := c.DescribeStateMachineAlias(ctx, &sfn.DescribeStateMachineAliasInput{StateMachineAliasArn: aws.String(arn + ":beta")}); !errors.As(err, &notFound) {
		t.Fatalf("describe a deleted alias: %v, want ResourceNotFound", err)
	}

	if _, err := c.DeleteStateMachine(ctx, &sfn.DeleteStateMachineInput{StateMachineArn: aws.String(arn)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DescribeStateMachineAlias(ctx, &sfn.DescribeStateMachineAliasInput{StateMachineAliasArn: aws.String(alias)}); !errors.As(err, &notFound) {
		t.Fatalf("alias of a deleted state machine: %v, want ResourceNotFound", err)
	}
	create(t, c, "sm", passResult("again"))
	vs, err := c.ListStateMachineVersions(ctx, &sfn.ListStateMachineVersionsInput{StateMachineArn: aws.String(arn)})
	if err != nil || len(vs.StateMachineVersions) != 0 {
		t.Fatalf("versions of a state machine created again = %v %+v", err, vs)
	}
	vs, err = c.ListStateMachineVersions(ctx, &sfn.ListStateMachineVersionsInput{StateMachineArn: aws.String(arn + "-none")})
	if err != nil || len(vs.StateMachineVersions) != 0 {
		t.Fatalf("versions of an unknown state machine = %v %+v", err, vs)
	}
}

// TestVersionAndAliasErrors: the errors of the version and alias operations, with nothing changed.
func TestVersionAndAliasErrors(t *testing.T) {
	srv := stepfunctions.RunT(t)
	c := srv.Client()
	ctx := context.Background()
	arn, v1 := createPublished(t, c, "sm", passResult("v1"))
	other, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("other"), Definition: aws.String(passResult("o")),
		RoleArn: aws.String(role), Publish: true})
	if err != nil {
		t.Fatal(err)
	}
	route := func(v string, w int32) types.RoutingConfigurationListItem {
		return types.RoutingConfigurationListItem{StateMachineVersionArn: aws.String(v), Weight: w}
	}
	createAlias := func(name string, rs ...types.RoutingConfigurationListItem) func() error {
		return func() error {
			return errOf(c.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String(name), RoutingConfiguration: rs}))
		}
	}
	tests := []apiErrorCase{
		{"weights not summing to 100", createAlias("a", route(v1, 90)), new(*types.ValidationException),
			"Invalid Routing Configuration: 'the weights must sum to 100, not 90'"},
		{"three versions", createAlias("a", route(v1, 50), route(v1, 25), route(v1, 25)), new(*types.ValidationException), ""},
		{"no version", func() error {
			return errOf(c.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String("a"), RoutingConfiguration: []types.RoutingConfigurationListItem{}}))
		}, new(*types.ValidationException), ""},
		{"weight over 100", createAlias("a", route(v1, 101)), new(*types.ValidationException),
			"1 validation error detected: Value '101' at 'routingConfiguration.1.member.weight' failed to satisfy constraint: Member must have value less than or equal to 100"},
		{"the same version twice", createAlias("a", route(v1, 50), route(v1, 50)), new(*types.ValidationException), ""},
		{"versions of two state machines", createAlias("a", route(v1, 50), route(aws.ToString(other.StateMachineVersionArn), 50)), new(*types.ValidationException), ""},
		{"a version that does not exist", createAlias("a", route(arn+":9", 100)), new(*types.ResourceNotFound), "Resource Not Found: '" + arn + ":9'"},
		{"an alias as a version", createAlias("a", route(arn+":prod", 100)), new(*types.ValidationException), ""},
		{"a numeric alias name", createAlias("12", route(v1, 100)), new(*types.ValidationException),
			"1 validation error detected: Value '12' at 'name' failed to satisfy constraint: Member must satisfy regular expression pattern: ^(?=.*[a-zA-Z_\\-\\.])[a-zA-Z0-9_\\-\\.]+$"},
		{"a numeric alias name and a weight over 100", createAlias("12", route(v1, 101)), new(*types.ValidationException),
			"2 validation errors detected: Value '12' at 'name' failed to satisfy constraint: Member must satisfy regular expression pattern: ^(?=.*[a-zA-Z_\\-\\.])[a-zA-Z0-9_\\-\\.]+$; Value '101' at 'routingConfiguration.1.member.weight' failed to satisfy constraint: Member must have value less than or equal to 100"},
		{"describe an unknown alias", func() error {
			return errOf(c.DescribeStateMachineAlias(ctx, &sfn.DescribeStateMachineAliasInput{StateMachineAliasArn: aws.String(arn + ":none")}))
		}, new(*types.ResourceNotFound), "Resource Not Found: '" + arn + ":none'"},
		{"update an unknown alias", func() error {
			return errOf(c.UpdateStateMachineAlias(ctx, &sfn.UpdateStateMachineAliasInput{StateMachineAliasArn: aws.String(arn + ":none"), Description: aws.String("d")}))
		}, new(*types.ResourceNotFound), ""},
		{"update without a change", func() error {
			return errOf(c.UpdateStateMachineAlias(ctx, &sfn.UpdateStateMachineAliasInput{StateMachineAliasArn: aws.String(arn + ":none")}))
		}, new(*types.ValidationException), ""},
		{"delete an unknown alias", func() error {
			return errOf(c.DeleteStateMachineAlias(ctx, &sfn.DeleteStateMachineAliasInput{StateMachineAliasArn: aws.String(arn + ":none")}))
		}, new(*types.ResourceNotFound), ""},
		{"publish an unknown state machine", func() error {
			return errOf(c.PublishStateMachineVersion(ctx, &sfn.PublishStateMachineVersionInput{StateMachineArn: aws.String(arn + "x")}))
		}, new(*types.StateMachineDoesNotExist), "State Machine Does Not Exist: '" + arn + "x'"},
		{"list aliases of an unknown state machine", func() error {
			return errOf(c.ListStateMachineAliases(ctx, &sfn.ListStateMachineAliasesInput{StateMachineArn: aws.String(arn + "x")}))
		}, new(*types.StateMachineDoesNotExist), ""},
		{"list aliases of an unknown version", func() error {
			return errOf(c.ListStateMachineAliases(ctx, &sfn.ListStateMachineAliasesInput{StateMachineArn: aws.String(arn + ":7")}))
		}, new(*types.ResourceNotFound), ""},
		{"list versions of a version", func() error {
			return errOf(c.ListStateMachineVersions(ctx, &sfn.ListStateMachineVersionsInput{StateMachineArn: aws.String(v1)}))
		}, new(*types.InvalidArn), ""},
		{"start an unknown alias", func() error {
			return errOf(c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(arn + ":none")}))
		}, new(*types.StateMachineDoesNotExist), ""},
		{"delete a version by the state machine's ARN", func() error {
			return errOf(c.DeleteStateMachineVersion(ctx, &sfn.DeleteStateMachineVersionInput{StateMachineVersionArn: aws.String(arn)}))
		}, new(*types.InvalidArn), ""},
		{"update a version", func() error {
			return errOf(c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(v1), Definition: aws.String(passResult("x"))}))
		}, new(*types.ValidationException), ""},
		{"delete a version with DeleteStateMachine", func() error {
			return errOf(c.DeleteStateMachine(ctx, &sfn.DeleteStateMachineInput{StateMachineArn: aws.String(v1)}))
		}, new(*types.ValidationException), ""},
		{"a version description without publish", func() error {
			return errOf(c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("new"), Definition: aws.String(passResult("n")),
				RoleArn: aws.String(role), VersionDescription: aws.String("d")}))
		}, new(*types.ValidationException), "Version description can only be set when publish is true"},
	}
	checkAPIErrors(t, tests)
	as, err := c.ListStateMachineAliases(ctx, &sfn.ListStateMachineAliasesInput{StateMachineArn: aws.String(arn)})
	if err != nil || len(as.StateMachineAliases) != 0 {
		t.Fatalf("aliases after refused requests = %v %+v", err, as)
	}
	d, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(v1)})
	if err != nil || aws.ToString(d.Definition) != passResult("v1") {
		t.Fatalf("version 1 after refused requests = %v %+v", err, d)
	}
}

// TestVersionQuotaOverTheAPI: the 1001st version is ServiceQuotaExceededException.
func TestVersionQuotaOverTheAPI(t *testing.T) {
	srv := stepfunctions.RunT(t)
	c := srv.Client()
	ctx := context.Background()
	arn := create(t, c, "sm", passResult("v0"))
	for i := range sfnengine.MaxVersions {
		if _, _, err := srv.Engine().Update(ctx, sfnengine.UpdateInput{StateMachineArn: arn, Definition: passResult(fmt.Sprint("v", i+1)), Publish: true}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(arn), Definition: aws.String(passResult("over")), Publish: true})
	var quota *types.ServiceQuotaExceededException
	if !errors.As(err, &quota) {
		t.Fatalf("version %d: %v, want ServiceQuotaExceededException", sfnengine.MaxVersions+1, err)
	}
}

// TestErrorMembers: the members of error shapes besides the message reach the SDK's typed errors:
// ResourceNotFound and TooManyTags name the resource, a routing ValidationException gives its reason.
func TestErrorMembers(t *testing.T) {
	srv := stepfunctions.RunT(t)
	c := srv.Client()
	ctx := context.Background()
	arn, v1 := createPublished(t, c, "sm", passResult("v1"))
	_, err := c.DescribeStateMachineAlias(ctx, &sfn.DescribeStateMachineAliasInput{StateMachineAliasArn: aws.String(arn + ":none")})
	var notFound *types.ResourceNotFound
	if !errors.As(err, &notFound) || aws.ToString(notFound.ResourceName) != arn+":none" {
		t.Fatalf("ResourceNotFound = %v, resourceName %v", err, notFound)
	}
	var many []types.Tag
	for i := range 51 {
		many = append(many, types.Tag{Key: aws.String(fmt.Sprint("k", i)), Value: aws.String("v")})
	}
	_, err = c.TagResource(ctx, &sfn.TagResourceInput{ResourceArn: aws.String(arn), Tags: many})
	var tooMany *types.TooManyTags
	if !errors.As(err, &tooMany) || aws.ToString(tooMany.ResourceName) != arn {
		t.Fatalf("TooManyTags = %v, resourceName %v", err, tooMany)
	}
	_, err = c.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String("a"),
		RoutingConfiguration: []types.RoutingConfigurationListItem{{StateMachineVersionArn: aws.String(v1), Weight: 99}}})
	var invalid *types.ValidationException
	if !errors.As(err, &invalid) || invalid.Reason != types.ValidationExceptionReasonInvalidRoutingConfiguration {
		t.Fatalf("ValidationException = %v, reason %v", err, invalid)
	}
}
