package deploy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go/middleware"
)

// access is one IAM action on one resource, the resource written as the template writes it once transformed and
// rendered (see Render): "${TransfersTable.Arn}", "${TransfersTable.Arn}/index/InProgress", "${TransferStateMachine}",
// "arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:execution:${TransferStateMachine.Name}:tr_…". key
// is what IAM evaluates dynamodb:LeadingKeys against for an item of a table: the partition key value of the item
// (a GetItem, PutItem, UpdateItem, DeleteItem or ConditionCheckItem, alone or in a transaction) or of the table
// Query; "" for everything else, an index Query included.
type access struct{ action, resource, key string }

// call is an access a function's code made, and the path of the function that made it.
type call struct {
	access
	path string
}

// resourceNames renders the names and ARNs the local components give resources in the template's form.
type resourceNames struct {
	// tables maps a table's name to its logical id.
	tables map[string]string
	// machines maps a state machine's ARN to its logical id.
	machines map[string]string
	// buses maps an event bus's name to its logical id.
	buses map[string]string
	// hashKeys maps a table's name to the name of its partition key attribute.
	hashKeys map[string]string
}

// itemKey is the partition key value of an item of table, given by its key or its whole item, or "" when the table
// or its key is not known.
func (n resourceNames) itemKey(table *string, item map[string]ddbtypes.AttributeValue) string {
	attr, ok := n.hashKeys[aws.ToString(table)]
	if !ok {
		return ""
	}
	if v, ok := item[attr].(*ddbtypes.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// keyEquality finds "name = :value" in a key condition expression.
var keyEquality = regexp.MustCompile(`(#?[A-Za-z0-9_]+)\s*=\s*(:[A-Za-z0-9_]+)`)

// queryKey is the partition key value a Query of a table names in its key condition; "" for a Query of an index
// (whose partition key is the index's, not the table's) or a condition it cannot read.
func (n resourceNames) queryKey(in *dynamodb.QueryInput) string {
	attr, ok := n.hashKeys[aws.ToString(in.TableName)]
	if !ok || in.IndexName != nil {
		return ""
	}
	for _, m := range keyEquality.FindAllStringSubmatch(aws.ToString(in.KeyConditionExpression), -1) {
		name := m[1]
		if alias, ok := in.ExpressionAttributeNames[name]; ok {
			name = alias
		}
		if v, ok := in.ExpressionAttributeValues[m[2]].(*ddbtypes.AttributeValueMemberS); ok && name == attr {
			return v.Value
		}
	}
	return ""
}

// eventBus renders an event bus given by name or ARN; one of no logical id stays as given, which no grant covers.
func (n resourceNames) eventBus(nameOrArn *string) string {
	s := aws.ToString(nameOrArn)
	if i := strings.LastIndex(s, ":event-bus/"); i >= 0 {
		s = s[i+len(":event-bus/"):]
	}
	if id, ok := n.buses[s]; ok {
		return "${" + id + ".Arn}"
	}
	return "event-bus/" + aws.ToString(nameOrArn)
}

// putEvents is the accessesOf of PutEvents: events:PutEvents on each entry's bus.
func putEvents(input any, n resourceNames) []access {
	var out []access
	for _, e := range input.(*eventbridge.PutEventsInput).Entries {
		out = append(out, access{"events:PutEvents", n.eventBus(e.EventBusName), ""})
	}
	return out
}

// table renders a table, or one of its indexes when index is set. A table of no logical id stays its name, which no
// grant covers.
func (n resourceNames) table(name, index *string) string {
	id, ok := n.tables[aws.ToString(name)]
	if !ok {
		return "table/" + aws.ToString(name)
	}
	if index != nil {
		return "${" + id + ".Arn}/index/" + aws.ToString(index)
	}
	return "${" + id + ".Arn}"
}

// stateMachine renders a state machine ARN as its Ref.
func (n resourceNames) stateMachine(arn *string) string {
	s := aws.ToString(arn)
	// Step Functions authorizes a call on a version or an alias (…:stateMachine:name:live) on the state machine's ARN.
	if prefix, name, ok := strings.Cut(s, ":stateMachine:"); ok {
		name, _, _ = strings.Cut(name, ":")
		s = prefix + ":stateMachine:" + name
	}
	if id, ok := n.machines[s]; ok {
		return "${" + id + "}"
	}
	return s
}

// execution renders an execution ARN with its state machine's name as a GetAtt and the partition, region and
// account as pseudo parameters: the form a grant on "execution:${Machine.Name}:*" is written in.
func (n resourceNames) execution(arn *string) string {
	s := aws.ToString(arn)
	for machine, id := range n.machines {
		prefix := strings.Replace(machine, ":stateMachine:", ":execution:", 1) + ":"
		if name, ok := strings.CutPrefix(s, prefix); ok {
			return "arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:execution:${" + id + ".Name}:" + name
		}
	}
	return s
}

// accessesOf returns the accesses IAM authorizes for one operation's input.
type accessesOf func(input any, n resourceNames) []access

// single is the accessesOf of an operation that is one action on one resource.
func single[In any](action string, resource func(In, resourceNames) string) accessesOf {
	return func(input any, n resourceNames) []access {
		return []access{{action, resource(input.(In), n), ""}}
	}
}

// item is the accessesOf of an operation on one item of a table: one action on the table, with the item's
// partition key.
func item[In any](action string, table func(In) (*string, map[string]ddbtypes.AttributeValue)) accessesOf {
	return func(input any, n resourceNames) []access {
		name, key := table(input.(In))
		return []access{{action, n.table(name, nil), n.itemKey(name, key)}}
	}
}

// transactWrite is the accessesOf of TransactWriteItems, which IAM authorizes item by item: a Put needs
// dynamodb:PutItem, an Update dynamodb:UpdateItem, a ConditionCheck dynamodb:ConditionCheckItem and a Delete
// dynamodb:DeleteItem, each on its item's table.
func transactWrite(input any, n resourceNames) []access {
	var out []access
	for _, item := range input.(*dynamodb.TransactWriteItemsInput).TransactItems {
		switch {
		case item.Put != nil:
			out = append(out, access{"dynamodb:PutItem", n.table(item.Put.TableName, nil), n.itemKey(item.Put.TableName, item.Put.Item)})
		case item.Update != nil:
			out = append(out, access{"dynamodb:UpdateItem", n.table(item.Update.TableName, nil), n.itemKey(item.Update.TableName, item.Update.Key)})
		case item.ConditionCheck != nil:
			out = append(out, access{"dynamodb:ConditionCheckItem", n.table(item.ConditionCheck.TableName, nil),
				n.itemKey(item.ConditionCheck.TableName, item.ConditionCheck.Key)})
		case item.Delete != nil:
			out = append(out, access{"dynamodb:DeleteItem", n.table(item.Delete.TableName, nil), n.itemKey(item.Delete.TableName, item.Delete.Key)})
		}
	}
	return out
}

// transactGet is the accessesOf of TransactGetItems: dynamodb:GetItem on each item's table.
func transactGet(input any, n resourceNames) []access {
	var out []access
	for _, item := range input.(*dynamodb.TransactGetItemsInput).TransactItems {
		if item.Get != nil {
			out = append(out, access{"dynamodb:GetItem", n.table(item.Get.TableName, nil), n.itemKey(item.Get.TableName, item.Get.Key)})
		}
	}
	return out
}

// iamAccesses maps an SDK operation, "<ServiceID>.<Operation>", to what IAM authorizes for it. An operation that is
// not here fails the test, so that a new call is mapped before its grant can be judged.
var iamAccesses = map[string]accessesOf{
	"DynamoDB.GetItem": item("dynamodb:GetItem", func(in *dynamodb.GetItemInput) (*string, map[string]ddbtypes.AttributeValue) {
		return in.TableName, in.Key
	}),
	"DynamoDB.PutItem": item("dynamodb:PutItem", func(in *dynamodb.PutItemInput) (*string, map[string]ddbtypes.AttributeValue) {
		return in.TableName, in.Item
	}),
	"DynamoDB.UpdateItem": item("dynamodb:UpdateItem", func(in *dynamodb.UpdateItemInput) (*string, map[string]ddbtypes.AttributeValue) {
		return in.TableName, in.Key
	}),
	"DynamoDB.DeleteItem": item("dynamodb:DeleteItem", func(in *dynamodb.DeleteItemInput) (*string, map[string]ddbtypes.AttributeValue) {
		return in.TableName, in.Key
	}),
	// A Query or Scan of an index is authorized on the index's ARN, not the table's.
	"DynamoDB.Query": func(input any, n resourceNames) []access {
		in := input.(*dynamodb.QueryInput)
		return []access{{"dynamodb:Query", n.table(in.TableName, in.IndexName), n.queryKey(in)}}
	},
	"DynamoDB.Scan": single("dynamodb:Scan", func(in *dynamodb.ScanInput, n resourceNames) string {
		return n.table(in.TableName, in.IndexName)
	}),
	"DynamoDB.TransactWriteItems": transactWrite,
	"DynamoDB.TransactGetItems":   transactGet,
	"EventBridge.PutEvents":       putEvents,
	"SFN.StartExecution": single("states:StartExecution", func(in *sfn.StartExecutionInput, n resourceNames) string {
		return n.stateMachine(in.StateMachineArn)
	}),
	"SFN.DescribeExecution": single("states:DescribeExecution", func(in *sfn.DescribeExecutionInput, n resourceNames) string {
		return n.execution(in.ExecutionArn)
	}),
	"SFN.GetExecutionHistory": single("states:GetExecutionHistory", func(in *sfn.GetExecutionHistoryInput, n resourceNames) string {
		return n.execution(in.ExecutionArn)
	}),
	"SFN.StopExecution": single("states:StopExecution", func(in *sfn.StopExecutionInput, n resourceNames) string {
		return n.execution(in.ExecutionArn)
	}),
}

// pathKey is the context key of the path a handler is run for.
type pathKey struct{}

// withPath labels ctx, and so every SDK call a handler makes with it, with the path being run.
func withPath(ctx context.Context, path string) context.Context {
	return context.WithValue(ctx, pathKey{}, path)
}

// recorder records every operation the SDK clients built from one aws.Config send, as IAM accesses.
type recorder struct {
	names resourceNames

	mu       sync.Mutex
	calls    []call
	unmapped []string // "<path>: <ServiceID>.<Operation>"
}

// apiOption is the recorder's aws.Config APIOptions entry: an Initialize middleware, which runs once per operation
// (not per retry) and sees the operation's input.
func (r *recorder) apiOption(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("RecordIAMAccess",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			r.record(ctx, awsmiddleware.GetServiceID(ctx)+"."+awsmiddleware.GetOperationName(ctx), in.Parameters)
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
}

func (r *recorder) record(ctx context.Context, op string, input any) {
	path, ok := ctx.Value(pathKey{}).(string)
	if !ok {
		path = "(a call without the handler's context)"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	toAccesses, ok := iamAccesses[op]
	if !ok {
		r.unmapped = append(r.unmapped, path+": "+op)
		return
	}
	for _, a := range toAccesses(input, r.names) {
		r.calls = append(r.calls, call{a, path})
	}
}

// recorded returns the calls recorded so far and the operations iamAccesses does not map.
func (r *recorder) recorded() ([]call, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls), slices.Clone(r.unmapped)
}

// exemptFromUse reports why a grant need not be called by the function's code, or "" when it must be: logs and X-Ray
// are written by the Lambda service and the X-Ray daemon with the function's role, the destinations of the
// function's asynchronous invocations (AWS::Lambda::EventInvokeConfig) are sent to by Lambda itself, and so are the
// streams of its event source mappings and their on-failure destinations.
func exemptFromUse(tmpl *Template, fn string, g grant) string {
	switch {
	case strings.HasPrefix(g.action, "logs:"):
		return "Lambda writes the function's logs with its role"
	case strings.HasPrefix(g.action, "xray:"):
		return "Lambda sends the function's traces with its role"
	}
	for _, src := range streamSources(tmpl, fn) {
		if g == src {
			return "Lambda's event source mapping reads the function's stream, and sends its on-failure destination, with the function's role"
		}
	}
	for _, dest := range asyncDestinations(tmpl, fn) {
		if g == dest {
			return "Lambda delivers the results of asynchronous invocations to this destination with the function's role"
		}
	}
	return ""
}

// destinationActions is the action Lambda needs, with the function's role, on each kind of asynchronous invocation
// destination.
var destinationActions = map[string]string{
	"AWS::SQS::Queue":       "sqs:SendMessage",
	"AWS::SNS::Topic":       "sns:Publish",
	"AWS::Lambda::Function": "lambda:InvokeFunction",
	"AWS::Events::EventBus": "events:PutEvents",
}

// asyncDestinations returns the grants Lambda itself uses to deliver fn's asynchronous invocation results: the
// OnSuccess and OnFailure destinations of its AWS::Lambda::EventInvokeConfig.
func asyncDestinations(tmpl *Template, fn string) []grant {
	var out []grant
	for _, id := range tmpl.OfType("AWS::Lambda::EventInvokeConfig") {
		p := tmpl.Resources[id].Properties
		if ref(p["FunctionName"]) != fn {
			continue
		}
		config, _ := p["DestinationConfig"].(map[string]any)
		for _, on := range []string{"OnSuccess", "OnFailure"} {
			d, _ := config[on].(map[string]any)
			dest := ref(d["Destination"])
			if action, ok := destinationActions[tmpl.Resources[dest].Type]; ok {
				out = append(out, grant{action, Render(d["Destination"]), ""})
			}
		}
	}
	return out
}

// streamActions are what Lambda needs, with the function's role, to read a DynamoDB stream it maps to the function
// (AWS Lambda developer guide, "Process DynamoDB records with Lambda": the execution role's permissions).
var streamActions = []string{"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"}

// streamSources returns the grants Lambda itself uses for fn's DynamoDB stream event source mappings: reading each
// stream (ListStreams on any resource) and sending its on-failure destination.
func streamSources(tmpl *Template, fn string) []grant {
	var out []grant
	for _, id := range tmpl.OfType("AWS::Lambda::EventSourceMapping") {
		p := tmpl.Resources[id].Properties
		if tmpl.Function(ref(p["FunctionName"])) != fn {
			continue
		}
		src := Render(p["EventSourceArn"])
		if !strings.HasSuffix(src, ".StreamArn}") {
			continue
		}
		for _, a := range streamActions {
			out = append(out, grant{a, src, ""})
		}
		out = append(out, grant{"dynamodb:ListStreams", "*", ""})
		config, _ := p["DestinationConfig"].(map[string]any)
		d, _ := config["OnFailure"].(map[string]any)
		if action, ok := destinationActions[tmpl.Resources[ref(d["Destination"])].Type]; ok {
			out = append(out, grant{action, Render(d["Destination"]), ""})
		}
	}
	return out
}

// callProblems compares the calls fn's code made with the grants of its role: a call no grant covers would be
// denied on AWS; a grant no call uses is more than the code needs, unless exemptFromUse says why the code need not
// use it. A grant with a LeadingKeys condition covers only the items whose partition key it matches, so each
// prefix of keys a role may use is a grant of its own that some path must use. The notes say, for each grant,
// which paths use it or why none need to. Calls are reported by the shape of their key (keyShape): one line for
// all the transfer records a path writes.
func callProblems(tmpl *Template, fn, role string, granted []grant, calls []call) (problems, notes []string) {
	uncovered := map[access][]string{}
	used := map[grant][]string{}
	for _, c := range calls {
		covered := false
		for _, g := range granted {
			if g.covers(c.access) {
				covered = true
				used[g] = appendNew(used[g], c.path)
			}
		}
		if !covered {
			shape := c.access
			shape.key = keyShape(c.key)
			uncovered[shape] = appendNew(uncovered[shape], c.path)
		}
	}
	for _, a := range slices.SortedFunc(maps.Keys(uncovered), func(a, b access) int { return strings.Compare(a.String(), b.String()) }) {
		problems = append(problems, fmt.Sprintf("%s calls %s, which its role %s does not grant (AccessDenied on AWS), on the paths:\n\t%s",
			fn, a, role, strings.Join(uncovered[a], "\n\t")))
	}
	for _, g := range granted {
		if why := exemptFromUse(tmpl, fn, g); why != "" {
			notes = append(notes, fmt.Sprintf("%s need not be called by the code: %s", g, why))
			continue
		}
		paths := slices.Sorted(slices.Values(used[g]))
		if len(paths) == 0 {
			problems = append(problems, fmt.Sprintf("%s's role %s grants %s, which no path of %s calls: more than the code needs",
				fn, role, g, fn))
			continue
		}
		notes = append(notes, fmt.Sprintf("%s is called on %d paths:\n\t%s", g, len(paths), strings.Join(paths, "\n\t")))
	}
	return problems, notes
}

func (a access) String() string {
	if a.key == "" {
		return a.action + " on " + a.resource
	}
	return a.action + " on " + a.resource + " for the item " + a.key
}

// keyShape is a partition key as far as its prefix, "TRANSFER#…" for every transfer record; a key without a prefix
// stays whole.
func keyShape(key string) string {
	if i := strings.IndexByte(key, '#'); i >= 0 {
		return key[:i+1] + "…"
	}
	return key
}

// appendNew appends s to list unless list has it.
func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// functionPaths runs every path of one function's handler, built by its exported constructor from cfg, against env.
type functionPaths func(t *testing.T, env *callEnv, cfg aws.Config)

// pathsByFunction has the paths of each function of the template, by logical id.
var pathsByFunction = map[string]functionPaths{
	"OrchestratorFunction":      orchestratorPaths,
	"DebitFunction":             debitPaths,
	"CreditFunction":            creditPaths,
	"TimeoutReconcilerFunction": reconcilerPaths,
	"OutcomeRelayFunction":      relayPaths,
}

// TestRolesGrantWhatTheCodeCalls proves TestLeastPrivilege's table against the code: it runs each function's real
// handler, wired by internal/transfer's constructors from an aws.Config, through every path it has against Dynoxide
// and the local Step Functions API, records every operation its SDK clients send as the IAM actions and resources
// AWS authorizes it by, with the partition key of each item (dynamodb:LeadingKeys), and compares them with the
// grants of the function's role in the transformed template. Every call must be granted, its item's key matching
// the grant's LeadingKeys condition, and every grant (each key prefix of it) called on some path, except logs,
// X-Ray and asynchronous invocation destinations, which Lambda uses on the function's behalf.
func TestRolesGrantWhatTheCodeCalls(t *testing.T) {
	tmpl := TransformT(t)
	stmts := tmpl.RoleStatements()
	// The functions run one after another, not in parallel: go test caches a package's result under the environment
	// variables and files its tests read, in the order they read them, and the SDK clients of parallel subtests
	// interleave their reads differently on every run, so `go test ./...` would run this package every time.
	for _, fn := range tmpl.OfType("AWS::Lambda::Function") {
		t.Run(fn, func(t *testing.T) {
			run, ok := pathsByFunction[fn]
			if !ok {
				t.Fatalf("%s has no paths in pathsByFunction: its role's grants cannot be checked", fn)
			}
			role := tmpl.FunctionRole(fn)
			if role == "" {
				t.Fatalf("%s: Role %v is not a role of the template", fn, tmpl.Resources[fn].Properties["Role"])
			}
			env := newCallEnv(t, tmpl)
			run(t, env, env.config())
			calls, unmapped := env.rec.recorded()
			for _, u := range unmapped {
				t.Errorf("%s sends an operation iamAccesses does not map to IAM: %s", fn, u)
			}
			problems, notes := callProblems(tmpl, fn, role, grants(stmts, role), calls)
			for _, n := range notes {
				t.Logf("%s: %s", fn, n)
			}
			for _, p := range problems {
				t.Error(p)
			}
		})
	}
	for fn := range pathsByFunction {
		if _, ok := tmpl.Resources[fn]; !ok {
			t.Errorf("pathsByFunction drives %s, which the template does not have", fn)
		}
	}
}

func TestCallProblems(t *testing.T) {
	tmpl := &Template{Resources: map[string]Resource{
		"Fn":    {Type: "AWS::Lambda::Function"},
		"Queue": {Type: "AWS::SQS::Queue"},
		"FnEventInvokeConfig": {Type: "AWS::Lambda::EventInvokeConfig", Properties: map[string]any{
			"FunctionName":      map[string]any{"Ref": "Fn"},
			"DestinationConfig": map[string]any{"OnFailure": map[string]any{"Destination": map[string]any{"Fn::GetAtt": []any{"Queue", "Arn"}}}},
		}},
	}}
	const (
		table = "${T.Arn}"
		exec  = "arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:execution:${M.Name}:"
	)
	tests := []struct {
		name    string
		granted []grant
		calls   []call
		want    []string
	}{
		{name: "exactly what is called",
			granted: []grant{{"dynamodb:GetItem", table, ""}, {"states:DescribeExecution", exec + "*", ""}},
			calls:   []call{{access{"dynamodb:GetItem", table, "A#1"}, "read"}, {access{"states:DescribeExecution", exec + "tr_1", ""}, "sweep"}}},
		{name: "a call not granted",
			granted: []grant{{"dynamodb:GetItem", table, ""}},
			calls:   []call{{access{"dynamodb:GetItem", table, ""}, "read"}, {access{"dynamodb:PutItem", table, ""}, "write"}},
			want:    []string{"Fn calls dynamodb:PutItem on ${T.Arn}, which its role R does not grant (AccessDenied on AWS), on the paths:\n\twrite"}},
		{name: "granted on the table, called on an index",
			granted: []grant{{"dynamodb:Query", table, ""}},
			calls:   []call{{access{"dynamodb:Query", table + "/index/I", ""}, "sweep"}},
			want: []string{"Fn calls dynamodb:Query on ${T.Arn}/index/I, which its role R does not grant (AccessDenied on AWS), on the paths:\n\tsweep",
				"Fn's role R grants dynamodb:Query on ${T.Arn}, which no path of Fn calls: more than the code needs"}},
		{name: "a grant not called",
			granted: []grant{{"dynamodb:GetItem", table, ""}, {"dynamodb:ConditionCheckItem", table, ""}},
			calls:   []call{{access{"dynamodb:GetItem", table, ""}, "read"}},
			want:    []string{"Fn's role R grants dynamodb:ConditionCheckItem on ${T.Arn}, which no path of Fn calls: more than the code needs"}},
		{name: "keys within their prefixes",
			granted: []grant{{"dynamodb:PutItem", table, "A#*"}, {"dynamodb:PutItem", table, "B#*"}, {"dynamodb:GetItem", table, "A#*"}},
			calls: []call{{access{"dynamodb:PutItem", table, "A#1"}, "open"}, {access{"dynamodb:PutItem", table, "B#1"}, "open"},
				{access{"dynamodb:GetItem", table, "A#2"}, "read"}}},
		{name: "a key outside the grant's prefixes, reported by its shape",
			granted: []grant{{"dynamodb:PutItem", table, "A#*"}},
			calls: []call{{access{"dynamodb:PutItem", table, "A#1"}, "open"}, {access{"dynamodb:PutItem", table, "B#1"}, "open"},
				{access{"dynamodb:PutItem", table, "B#2"}, "retry"}},
			want: []string{"Fn calls dynamodb:PutItem on ${T.Arn} for the item B#…, which its role R does not grant (AccessDenied on AWS), on the paths:\n\topen\n\tretry"}},
		{name: "a prefix no path uses",
			granted: []grant{{"dynamodb:GetItem", table, "A#*"}, {"dynamodb:GetItem", table, "B#*"}},
			calls:   []call{{access{"dynamodb:GetItem", table, "A#1"}, "read"}},
			want:    []string{"Fn's role R grants dynamodb:GetItem on ${T.Arn} for keys B#*, which no path of Fn calls: more than the code needs"}},
		{name: "a key condition does not cover an access without a key",
			granted: []grant{{"dynamodb:Query", table + "/index/I", "A#*"}},
			calls:   []call{{access{"dynamodb:Query", table + "/index/I", ""}, "sweep"}},
			want: []string{"Fn calls dynamodb:Query on ${T.Arn}/index/I, which its role R does not grant (AccessDenied on AWS), on the paths:\n\tsweep",
				"Fn's role R grants dynamodb:Query on ${T.Arn}/index/I for keys A#*, which no path of Fn calls: more than the code needs"}},
		{name: "logs, tracing and the failure destination are Lambda's",
			granted: []grant{{"logs:PutLogEvents", "${G.Arn}", ""}, {"xray:PutTraceSegments", "*", ""}, {"sqs:SendMessage", "${Queue.Arn}", ""}}},
		{name: "another queue is not the destination",
			granted: []grant{{"sqs:SendMessage", "${Other.Arn}", ""}},
			want:    []string{"Fn's role R grants sqs:SendMessage on ${Other.Arn}, which no path of Fn calls: more than the code needs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := callProblems(tmpl, "Fn", "R", tt.granted, tt.calls)
			if !slices.Equal(got, tt.want) {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// notSent is an HTTP client that sends nothing: the recorder sees each operation before it would be sent.
type notSent struct{}

func (notSent) Do(*http.Request) (*http.Response, error) { return nil, errors.New("not sent") }

func TestRecorderAccesses(t *testing.T) {
	const machine = "arn:aws:states:us-east-1:123456789012:stateMachine:Machine"
	rec := &recorder{names: resourceNames{tables: map[string]string{"table-1": "Table"}, machines: map[string]string{machine: "M"},
		hashKeys: map[string]string{"table-1": "pk"}}}
	cfg := aws.Config{
		Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("a", "b", ""),
		BaseEndpoint: aws.String("http://127.0.0.1:1"), HTTPClient: notSent{}, RetryMaxAttempts: 1,
		APIOptions: []func(*middleware.Stack) error{rec.apiOption},
	}
	db, states := dynamodb.NewFromConfig(cfg), sfn.NewFromConfig(cfg)
	ctx := withPath(context.Background(), "p")
	table := aws.String("table-1")
	key := map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "k"}}
	_, _ = db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
		{Put: &ddbtypes.Put{TableName: table, Item: key}},
		{Update: &ddbtypes.Update{TableName: table, Key: key, UpdateExpression: aws.String("SET a = :a")}},
		{ConditionCheck: &ddbtypes.ConditionCheck{TableName: table, Key: key, ConditionExpression: aws.String("attribute_exists(pk)")}},
		{Delete: &ddbtypes.Delete{TableName: table, Key: key}},
	}})
	_, _ = db.Query(ctx, &dynamodb.QueryInput{TableName: table, IndexName: aws.String("ByShard"),
		KeyConditionExpression:    aws.String("pk = :s"),
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":s": &ddbtypes.AttributeValueMemberS{Value: "S#1"}}})
	_, _ = db.Query(ctx, &dynamodb.QueryInput{TableName: table, KeyConditionExpression: aws.String("#k = :k AND begins_with(sk, :p)"),
		ExpressionAttributeNames: map[string]string{"#k": "pk"},
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{
			":k": &ddbtypes.AttributeValueMemberS{Value: "L#1"}, ":p": &ddbtypes.AttributeValueMemberS{Value: "D"}}})
	_, _ = db.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{TransactItems: []ddbtypes.TransactGetItem{
		{Get: &ddbtypes.Get{TableName: table, Key: key}},
	}})
	_, _ = db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String("other"), Key: key})
	_, _ = states.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(machine)})
	_, _ = states.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(machine + ":live")})
	_, _ = states.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(
		"arn:aws:states:us-east-1:123456789012:execution:Machine:tr_1")})
	_, _ = db.ListTables(ctx, &dynamodb.ListTablesInput{})

	calls, unmapped := rec.recorded()
	want := []call{
		{access{"dynamodb:PutItem", "${Table.Arn}", "k"}, "p"},
		{access{"dynamodb:UpdateItem", "${Table.Arn}", "k"}, "p"},
		{access{"dynamodb:ConditionCheckItem", "${Table.Arn}", "k"}, "p"},
		{access{"dynamodb:DeleteItem", "${Table.Arn}", "k"}, "p"},
		{access{"dynamodb:Query", "${Table.Arn}/index/ByShard", ""}, "p"},
		{access{"dynamodb:Query", "${Table.Arn}", "L#1"}, "p"},
		{access{"dynamodb:GetItem", "${Table.Arn}", "k"}, "p"},
		{access{"dynamodb:GetItem", "table/other", ""}, "(a call without the handler's context)"},
		{access{"states:StartExecution", "${M}", ""}, "p"},
		{access{"states:StartExecution", "${M}", ""}, "p"}, // through the alias: authorized on the state machine's ARN
		{access{"states:DescribeExecution", "arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:execution:${M.Name}:tr_1", ""}, "p"},
	}
	if !slices.Equal(calls, want) {
		t.Errorf("calls:\n%v\nwant:\n%v", calls, want)
	}
	if want := []string{"p: DynamoDB.ListTables"}; !slices.Equal(unmapped, want) {
		t.Errorf("unmapped = %q, want %q", unmapped, want)
	}
}
