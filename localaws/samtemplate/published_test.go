package samtemplate

import (
	"reflect"
	"strings"
	"testing"
)

// TestAutoPublishAliasRefs: !Ref Function.Alias and the logical ids the SAM transform gives the aliases of
// AutoPublishAlias (FunctionAlias<name>, '-' and '_' written D and U; StateMachineAlias<name>) reach the Resolver as
// Refs of those ids, which GeneratedResource describes; a function without AutoPublishAlias has no .Alias.
func TestAutoPublishAliasRefs(t *testing.T) {
	src := `
Globals:
  Function:
    AutoPublishAlias: live
Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Environment:
        Variables:
          MACHINE: !Ref MachineAliasprod
          OTHER: !Ref OtherAliasblueDgreenUx
  Other:
    Type: AWS::Serverless::Function
    Properties:
      AutoPublishAlias: blue-green_x
  Machine:
    Type: AWS::Serverless::StateMachine
    Properties:
      AutoPublishAlias: prod
      DefinitionUri: sm.asl.json
      DefinitionSubstitutions:
        FnArn: !Ref Fn.Alias
        OtherArn: {Ref: Other.Alias}
`
	tmpl, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	sms, err := tmpl.StateMachines(Env{}, fakeResolver{})
	if err != nil {
		t.Fatal(err)
	}
	wantSubs := map[string]string{"FnArn": "ref:FnAliaslive", "OtherArn": "ref:OtherAliasblueDgreenUx"}
	if len(sms) != 1 || !reflect.DeepEqual(sms[0].Substitutions, wantSubs) || sms[0].AutoPublishAlias != "prod" {
		t.Errorf("state machines = %+v, want substitutions %v and AutoPublishAlias prod", sms, wantSubs)
	}
	fns, err := tmpl.Functions(Env{}, fakeResolver{})
	if err != nil {
		t.Fatal(err)
	}
	if got := fns[0].Environment; got["MACHINE"] != "ref:MachineAliasprod" || got["OTHER"] != "ref:OtherAliasblueDgreenUx" {
		t.Errorf("environment = %v", got)
	}
	for id, want := range map[string]Generated{
		"FnAliaslive":            {LogicalID: "FnAliaslive", Type: TypeLambdaAlias, Parent: "Fn", Alias: "live"},
		"OtherAliasblueDgreenUx": {LogicalID: "OtherAliasblueDgreenUx", Type: TypeLambdaAlias, Parent: "Other", Alias: "blue-green_x"},
		"MachineAliasprod":       {LogicalID: "MachineAliasprod", Type: TypeStateMachineAlias, Parent: "Machine", Alias: "prod"},
		"OtherAliasblue-green_x": {},
		"FnAliasprod":            {},
		"MachineAliaslive":       {},
		"MachineVersion":         {},
		"FnVersion640ef8b3f4":    {},
		"Machine":                {},
	} {
		got, ok := tmpl.GeneratedResource(id)
		if ok != (want != Generated{}) || got != want {
			t.Errorf("GeneratedResource(%s) = %+v, %v; want %+v", id, got, ok, want)
		}
	}
}

// TestAliasRefsRefused: what the local stack does not resolve is an error naming it: the alias of a function
// without AutoPublishAlias, a function's .Version, an alias name given by an intrinsic.
func TestAliasRefsRefused(t *testing.T) {
	for name, src := range map[string]string{
		"Fn.Alias":         "Resources:\n  Fn:\n    Type: AWS::Serverless::Function\n    Properties:\n      Environment: {Variables: {X: !Ref Fn.Alias}}\n",
		"Fn.Version":       "Resources:\n  Fn:\n    Type: AWS::Serverless::Function\n    Properties:\n      AutoPublishAlias: live\n      Environment: {Variables: {X: !Ref Fn.Version}}\n",
		"AutoPublishAlias": "Resources:\n  Fn:\n    Type: AWS::Serverless::Function\n    Properties:\n      AutoPublishAlias: !Ref P\n      Environment: {Variables: {X: !Ref Fn.Alias}}\n",
	} {
		tmpl, err := Parse([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tmpl.Functions(Env{}, fakeResolver{}); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v, want it to name %s", name, err, name)
		}
	}
}
