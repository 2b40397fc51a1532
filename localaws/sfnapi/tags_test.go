package sfnapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// tagsOf lists a resource's tags as key=value strings, in the order the API gives them.
func tagsOf(t *testing.T, c *sfn.Client, arn string) []string {
	t.Helper()
	out, err := c.ListTagsForResource(context.Background(), &sfn.ListTagsForResourceInput{ResourceArn: aws.String(arn)})
	if err != nil {
		t.Fatalf("ListTagsForResource %s: %v", arn, err)
	}
	var kv []string
	for _, tg := range out.Tags {
		kv = append(kv, aws.ToString(tg.Key)+"="+aws.ToString(tg.Value))
	}
	return kv
}

func tagList(kv ...string) []types.Tag {
	var out []types.Tag
	for _, s := range kv {
		k, v, _ := strings.Cut(s, "=")
		out = append(out, types.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	return out
}

// TestTagsOnStateMachinesAndActivities: tags given to CreateStateMachine and CreateActivity are kept; TagResource
// adds and replaces, UntagResource removes (ignoring keys the resource does not have), ListTagsForResource lists by
// key.
func TestTagsOnStateMachinesAndActivities(t *testing.T) {
	srv := stepfunctions.RunT(t)
	c := srv.Client()
	ctx := context.Background()
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("tagged"),
		Definition: aws.String(passChoice), RoleArn: aws.String(role), Tags: tagList("team=payments", "env=dev")})
	if err != nil {
		t.Fatal(err)
	}
	act, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("sign"), Tags: tagList("owner=ops")})
	if err != nil {
		t.Fatal(err)
	}
	smArn, actArn := aws.ToString(sm.StateMachineArn), aws.ToString(act.ActivityArn)
	if got := fmt.Sprint(tagsOf(t, c, smArn)); got != "[env=dev team=payments]" {
		t.Fatalf("state machine tags after create = %s", got)
	}
	if got := fmt.Sprint(tagsOf(t, c, actArn)); got != "[owner=ops]" {
		t.Fatalf("activity tags after create = %s", got)
	}
	for _, arn := range []string{smArn, actArn} {
		if _, err := c.TagResource(ctx, &sfn.TagResourceInput{ResourceArn: aws.String(arn), Tags: tagList("env=prod", "cost center=42")}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.UntagResource(ctx, &sfn.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: []string{"owner", "absent"}}); err != nil {
			t.Fatal(err)
		}
	}
	if got := fmt.Sprint(tagsOf(t, c, smArn)); got != "[cost center=42 env=prod team=payments]" {
		t.Fatalf("state machine tags = %s", got)
	}
	if got := fmt.Sprint(tagsOf(t, c, actArn)); got != "[cost center=42 env=prod]" {
		t.Fatalf("activity tags = %s", got)
	}
}

// TestTagErrors: AWS's limits and errors, and nothing is changed by a refused request.
func TestTagErrors(t *testing.T) {
	srv := stepfunctions.RunT(t)
	c := srv.Client()
	ctx := context.Background()
	smArn := create(t, c, "sm", passChoice)
	if _, err := c.TagResource(ctx, &sfn.TagResourceInput{ResourceArn: aws.String(smArn), Tags: tagList("a=1")}); err != nil {
		t.Fatal(err)
	}
	var fifty []string
	for i := range 50 {
		fifty = append(fifty, fmt.Sprintf("k%02d=v", i))
	}
	long := strings.Repeat("k", 129)
	tests := []apiErrorCase{
		{"51 tags", func() error {
			return errOf(c.TagResource(ctx, &sfn.TagResourceInput{ResourceArn: aws.String(smArn), Tags: tagList(fifty...)}))
		}, new(*types.TooManyTags), "Too many tags: '" + smArn + " would have 51 tags, more than 50'"},
		{"51 tags on create", func() error {
			return errOf(c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("many"), Definition: aws.String(passChoice),
				RoleArn: aws.String(role), Tags: tagList(append(fifty, "one=more")...)}))
		}, new(*types.TooManyTags), ""},
		{"key too long", func() error {
			return errOf(c.TagResource(ctx, &sfn.TagResourceInput{ResourceArn: aws.String(smArn), Tags: tagList(long + "=v")}))
		}, new(smithy.APIError), "1 validation error detected: Value '" + long + "' at 'tags.1.member.key' failed to satisfy constraint: Member must have length less than or equal to 128"},
		{"empty key and long value", func() error {
			return errOf(c.TagResource(ctx, &sfn.TagResourceInput{ResourceArn: aws.String(smArn),
				Tags: []types.Tag{{Key: aws.String(""), Value: aws.String(strings.Repeat("v", 257))}}}))
		}, new(smithy.APIError), "2 validation errors detected: Value '' at 'tags.1.member.key' failed to satisfy constraint: Member must have length greater than or equal to 1; Value '" + strings.Repeat("v", 257) + "' at 'tags.1.member.value' failed to satisfy constraint: Member must have length less than or equal to 256"},
		{"reserved prefix", func() error {
			return errOf(c.TagResource(ctx, &sfn.TagResourceInput{ResourceArn: aws.String(smArn), Tags: tagList("aws:cloudformation:stack-name=x")}))
		}, new(smithy.APIError), "1 validation error detected: Value 'aws:cloudformation:stack-name' at 'tags.1.member.key' failed to satisfy constraint: Tag keys prefixed with 'aws:' are reserved for AWS use"},
		{"character not allowed", func() error {
			return errOf(c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("act"), Tags: tagList("k=a*b")}))
		}, new(smithy.APIError), ""},
		{"unknown state machine", func() error {
			return errOf(c.ListTagsForResource(ctx, &sfn.ListTagsForResourceInput{ResourceArn: aws.String(smArn + "x")}))
		}, new(*types.ResourceNotFound), "Resource Not Found: '" + smArn + "x'"},
		{"unknown activity", func() error {
			return errOf(c.TagResource(ctx, &sfn.TagResourceInput{ResourceArn: aws.String("arn:aws:states:us-east-1:123456789012:activity:none"), Tags: tagList("a=1")}))
		}, new(*types.ResourceNotFound), ""},
		{"version ARN", func() error {
			return errOf(c.UntagResource(ctx, &sfn.UntagResourceInput{ResourceArn: aws.String(smArn + ":1"), TagKeys: []string{"a"}}))
		}, new(*types.ResourceNotFound), ""},
		{"not an ARN", func() error {
			return errOf(c.ListTagsForResource(ctx, &sfn.ListTagsForResourceInput{ResourceArn: aws.String("sm")}))
		}, new(*types.InvalidArn), "Invalid Arn: 'Invalid ARN prefix: sm'"},
		{"execution ARN", func() error {
			return errOf(c.ListTagsForResource(ctx, &sfn.ListTagsForResourceInput{ResourceArn: aws.String("arn:aws:states:us-east-1:123456789012:execution:sm:x")}))
		}, new(*types.InvalidArn), ""},
	}
	// TagResource and CreateActivity do not model ValidationException: the SDK reports it as a generic API error,
	// with its code, which the cases wanting a smithy.APIError check.
	checkAPIErrors(t, tests)
	if got := fmt.Sprint(tagsOf(t, c, smArn)); got != "[a=1]" {
		t.Fatalf("tags after refused requests = %s", got)
	}
	if _, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(srv.Engine().StateMachineArn("many"))}); err == nil {
		t.Fatal("a state machine refused for its tags was created")
	}
}

// TestTagsAcrossRestart: tags are saved with the state machine and the activity in a FileStore.
func TestTagsAcrossRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c1, stop1 := servedEngine(t, sfnengine.Options{Store: mustFileStore(t, dir)})
	smArn := create(t, c1, "sm", passChoice)
	act, err := c1.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("act")})
	if err != nil {
		t.Fatal(err)
	}
	for _, arn := range []string{smArn, aws.ToString(act.ActivityArn)} {
		if _, err := c1.TagResource(ctx, &sfn.TagResourceInput{ResourceArn: aws.String(arn), Tags: tagList("a=1", "b=2")}); err != nil {
			t.Fatal(err)
		}
		if _, err := c1.UntagResource(ctx, &sfn.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: []string{"a"}}); err != nil {
			t.Fatal(err)
		}
	}
	stop1()

	_, c2 := restartEngine(t, dir, sfnengine.Options{})
	for _, arn := range []string{smArn, aws.ToString(act.ActivityArn)} {
		if got := fmt.Sprint(tagsOf(t, c2, arn)); got != "[b=2]" {
			t.Fatalf("tags of %s after the restart = %s", arn, got)
		}
	}
}
