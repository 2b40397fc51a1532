package sfnapi_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// TestVersionAndAliasPagesAreStable pages ListStateMachineVersions (newest first) and ListStateMachineAliases (by
// name) while versions and aliases are published, created and deleted between pages: none is listed twice, none
// that existed throughout is skipped, a deleted one is not listed, and one added after the page's last item is.
func TestVersionAndAliasPagesAreStable(t *testing.T) {
	srv := stepfunctions.RunT(t)
	c := srv.Client()
	ctx := context.Background()
	smArn := create(t, c, "paged", passChoice)
	publish := func(i int) string {
		t.Helper()
		if _, err := c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(smArn),
			Definition: aws.String(fmt.Sprintf(`{"StartAt":"P","States":{"P":{"Type":"Pass","Result":%d,"End":true}}}`, i))}); err != nil {
			t.Fatal(err)
		}
		out, err := c.PublishStateMachineVersion(ctx, &sfn.PublishStateMachineVersionInput{StateMachineArn: aws.String(smArn)})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.StateMachineVersionArn)
	}
	for i := 1; i <= 5; i++ {
		publish(i)
	}
	alias := func(name string) {
		t.Helper()
		if _, err := c.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String(name),
			RoutingConfiguration: []types.RoutingConfigurationListItem{{StateMachineVersionArn: aws.String(smArn + ":1"), Weight: 100}}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"b", "d", "f", "h"} {
		alias(n)
	}

	var versions []string
	var token *string
	for pages := 0; pages == 0 || token != nil; pages++ {
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		out, err := c.ListStateMachineVersions(ctx, &sfn.ListStateMachineVersionsInput{StateMachineArn: aws.String(smArn),
			MaxResults: 2, NextToken: token})
		if err != nil {
			t.Fatal(err)
		}
		token = out.NextToken
		for _, v := range out.StateMachineVersions {
			versions = append(versions, aws.ToString(v.StateMachineVersionArn)[len(smArn)+1:])
		}
		if pages == 0 { // listed 5 and 4: 6 comes before them, 3 is deleted
			publish(6)
			if _, err := c.DeleteStateMachineVersion(ctx, &sfn.DeleteStateMachineVersionInput{StateMachineVersionArn: aws.String(smArn + ":3")}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if fmt.Sprint(versions) != "[5 4 2 1]" {
		t.Fatalf("versions listed %v, want [5 4 2 1]", versions)
	}

	var aliases []string
	token = nil
	for pages := 0; pages == 0 || token != nil; pages++ {
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		out, err := c.ListStateMachineAliases(ctx, &sfn.ListStateMachineAliasesInput{StateMachineArn: aws.String(smArn),
			MaxResults: 2, NextToken: token})
		if err != nil {
			t.Fatal(err)
		}
		token = out.NextToken
		for _, a := range out.StateMachineAliases {
			aliases = append(aliases, aws.ToString(a.StateMachineAliasArn)[len(smArn)+1:])
		}
		if pages == 0 { // listed b and d: a comes before them, e after, f is deleted
			alias("a")
			alias("e")
			if _, err := c.DeleteStateMachineAlias(ctx, &sfn.DeleteStateMachineAliasInput{StateMachineAliasArn: aws.String(smArn + ":f")}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if fmt.Sprint(aliases) != "[b d e h]" {
		t.Fatalf("aliases listed %v, want [b d e h]", aliases)
	}
}
