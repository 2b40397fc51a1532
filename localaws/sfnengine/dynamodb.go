package sfnengine

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithymiddleware "github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// dynamoAPI is the part of *dynamodb.Client the dynamodb:* integrations use.
type dynamoAPI interface {
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// DynamoDBAPI is what Options.DynamoDB needs; *dynamodb.Client satisfies it. Like LambdaInvoker, its calls must
// return soon after their context is done.
type DynamoDBAPI = dynamoAPI

var dynamoOps = map[string]func(ctx context.Context, x *execution, params any) (any, *failure){
	"putItem":    dynamoPutItem,
	"getItem":    dynamoGetItem,
	"updateItem": dynamoUpdateItem,
	"deleteItem": dynamoDeleteItem,
}

// dynamoParams reads the request fields of a dynamodb:* task from its Parameters.
type dynamoParams struct {
	m    any // the Parameters object
	errs []string
}

func (p *dynamoParams) get(k string) (any, bool) { return jsonvalue.Lookup(p.m, k) }

func (p *dynamoParams) str(k string) *string {
	v, ok := p.get(k)
	if !ok {
		return nil
	}
	s, isStr := v.(string)
	if !isStr {
		p.errs = append(p.errs, fmt.Sprintf("%s must be a string", k))
		return nil
	}
	return &s
}

func (p *dynamoParams) item(k string) map[string]types.AttributeValue {
	v, ok := p.get(k)
	if !ok || v == nil {
		return nil
	}
	if !jsonvalue.IsObject(v) {
		p.errs = append(p.errs, fmt.Sprintf("%s must be a map of attribute values", k))
		return nil
	}
	out, err := attributeMap(v)
	if err != nil {
		p.errs = append(p.errs, fmt.Sprintf("%s: %v", k, err))
	}
	return out
}

func (p *dynamoParams) names() map[string]string {
	v, _ := p.get("ExpressionAttributeNames")
	o, ok := v.(*jsonvalue.Object)
	if !ok {
		m, isMap := v.(map[string]any)
		if !isMap {
			return nil
		}
		o = jsonvalue.NewObject(len(m))
		for k, x := range m {
			o.Set(k, x)
		}
	}
	out := make(map[string]string, o.Len())
	for i, k := range o.Keys() {
		if str, ok := o.Values()[i].(string); ok {
			out[k] = str
		}
	}
	return out
}

func (p *dynamoParams) failure() *failure {
	if len(p.errs) == 0 {
		return nil
	}
	return &failure{Error: "DynamoDB.AmazonDynamoDBException", Cause: fmt.Sprintf(
		"%s (Service: AmazonDynamoDBv2; Status Code: 400; Error Code: ValidationException; Request ID: local; Proxy: null)", p.errs[0])}
}

func newDynamoParams(params any) *dynamoParams {
	return &dynamoParams{m: params}
}

func dynamoClient(x *execution) (dynamoAPI, *failure) {
	if x.eng.opts.DynamoDB == nil {
		return nil, &failure{Error: "DynamoDB.AmazonDynamoDBException", Cause: "no DynamoDB client is configured"}
	}
	return x.eng.opts.DynamoDB, nil
}

// dynamoResult is what one DynamoDB item call returns: the attribute map to report and under which name
// ("Item" or "Attributes"), and the response metadata.
type dynamoResult struct {
	field string
	attrs map[string]types.AttributeValue
	md    smithymiddleware.Metadata
}

// dynamoTask turns one DynamoDB item call into a task integration: it reads the Parameters, calls DynamoDB and
// shapes the result (or the error) as Step Functions does.
func dynamoTask(call func(ctx context.Context, c dynamoAPI, p *dynamoParams) (dynamoResult, error)) func(context.Context, *execution, any) (any, *failure) {
	return func(ctx context.Context, x *execution, params any) (any, *failure) {
		c, f := dynamoClient(x)
		if f != nil {
			return nil, f
		}
		res, err := call(ctx, c, newDynamoParams(params))
		var pe *paramsError
		if errors.As(err, &pe) {
			return nil, pe.failure
		}
		if err != nil {
			return nil, dynamoFailure(err)
		}
		out := jsonvalue.NewObject(3)
		if res.attrs != nil {
			out.Set(res.field, attributesJSON(res.attrs))
		}
		return withSdkMetadata(out, res.md), nil
	}
}

// paramsError carries a Parameters problem found before calling DynamoDB.
type paramsError struct{ failure *failure }

func (e *paramsError) Error() string { return e.failure.Cause }

func (p *dynamoParams) check() error {
	if f := p.failure(); f != nil {
		return &paramsError{failure: f}
	}
	return nil
}

func (p *dynamoParams) returnValues() types.ReturnValue {
	if s := p.str("ReturnValues"); s != nil {
		return types.ReturnValue(*s)
	}
	return ""
}

var dynamoPutItem = dynamoTask(func(ctx context.Context, c dynamoAPI, p *dynamoParams) (dynamoResult, error) {
	in := &dynamodb.PutItemInput{TableName: p.str("TableName"), Item: p.item("Item"),
		ConditionExpression: p.str("ConditionExpression"), ExpressionAttributeNames: p.names(),
		ExpressionAttributeValues: p.item("ExpressionAttributeValues"), ReturnValues: p.returnValues()}
	if err := p.check(); err != nil {
		return dynamoResult{}, err
	}
	out, err := c.PutItem(ctx, in, serverValidation)
	if err != nil {
		return dynamoResult{}, err
	}
	return dynamoResult{field: "Attributes", attrs: out.Attributes, md: out.ResultMetadata}, nil
})

var dynamoGetItem = dynamoTask(func(ctx context.Context, c dynamoAPI, p *dynamoParams) (dynamoResult, error) {
	in := &dynamodb.GetItemInput{TableName: p.str("TableName"), Key: p.item("Key"),
		ProjectionExpression: p.str("ProjectionExpression"), ExpressionAttributeNames: p.names()}
	if v, _ := p.get("ConsistentRead"); v != nil {
		if b, ok := v.(bool); ok {
			in.ConsistentRead = &b
		}
	}
	if err := p.check(); err != nil {
		return dynamoResult{}, err
	}
	out, err := c.GetItem(ctx, in, serverValidation)
	if err != nil {
		return dynamoResult{}, err
	}
	return dynamoResult{field: "Item", attrs: out.Item, md: out.ResultMetadata}, nil
})

var dynamoUpdateItem = dynamoTask(func(ctx context.Context, c dynamoAPI, p *dynamoParams) (dynamoResult, error) {
	in := &dynamodb.UpdateItemInput{TableName: p.str("TableName"), Key: p.item("Key"),
		UpdateExpression: p.str("UpdateExpression"), ConditionExpression: p.str("ConditionExpression"),
		ExpressionAttributeNames: p.names(), ExpressionAttributeValues: p.item("ExpressionAttributeValues"),
		ReturnValues: p.returnValues()}
	if err := p.check(); err != nil {
		return dynamoResult{}, err
	}
	out, err := c.UpdateItem(ctx, in, serverValidation)
	if err != nil {
		return dynamoResult{}, err
	}
	return dynamoResult{field: "Attributes", attrs: out.Attributes, md: out.ResultMetadata}, nil
})

var dynamoDeleteItem = dynamoTask(func(ctx context.Context, c dynamoAPI, p *dynamoParams) (dynamoResult, error) {
	in := &dynamodb.DeleteItemInput{TableName: p.str("TableName"), Key: p.item("Key"),
		ConditionExpression: p.str("ConditionExpression"), ExpressionAttributeNames: p.names(),
		ExpressionAttributeValues: p.item("ExpressionAttributeValues"), ReturnValues: p.returnValues()}
	if err := p.check(); err != nil {
		return dynamoResult{}, err
	}
	out, err := c.DeleteItem(ctx, in, serverValidation)
	if err != nil {
		return dynamoResult{}, err
	}
	return dynamoResult{field: "Attributes", attrs: out.Attributes, md: out.ResultMetadata}, nil
})

// dynamoErrorClasses maps DynamoDB's wire error codes to the exception classes the AWS SDK for Java v1 models them
// as (com.amazonaws.services.dynamodbv2.model). The optimized integration names an error DynamoDB.<class>, so the
// wire code and the name can differ (InternalServerError → DynamoDB.InternalServerErrorException); every code without
// a class, ThrottlingException and ValidationException among them, is reported as the base class,
// DynamoDB.AmazonDynamoDBException. docs/workflow.md gives the sources.
var dynamoErrorClasses = map[string]string{
	"ConditionalCheckFailedException":          "ConditionalCheckFailedException",
	"ResourceNotFoundException":                "ResourceNotFoundException",
	"ProvisionedThroughputExceededException":   "ProvisionedThroughputExceededException",
	"ItemCollectionSizeLimitExceededException": "ItemCollectionSizeLimitExceededException",
	"TransactionConflictException":             "TransactionConflictException",
	"RequestLimitExceeded":                     "RequestLimitExceededException",
	"InternalServerError":                      "InternalServerErrorException",
	"ResourceInUseException":                   "ResourceInUseException",
	"LimitExceededException":                   "LimitExceededException",
	"TransactionCanceledException":             "TransactionCanceledException",
	"TransactionInProgressException":           "TransactionInProgressException",
	"IdempotentParameterMismatchException":     "IdempotentParameterMismatchException",
}

// dynamoBaseError is the name of every DynamoDB error the Java SDK does not model as a class of its own.
const dynamoBaseError = "DynamoDB.AmazonDynamoDBException"

// DynamoDBErrorName is the error name the optimized DynamoDB integration reports for DynamoDB's wire error code.
func DynamoDBErrorName(code string) string {
	if class, ok := dynamoErrorClasses[code]; ok {
		return "DynamoDB." + class
	}
	return dynamoBaseError
}

// DynamoDBErrorNames returns, sorted, every error name the optimized DynamoDB integration
// (arn:aws:states:::dynamodb:*) can report for a failed call; cmd/aslcheck holds Retry and Catch to it.
func DynamoDBErrorNames() []string {
	names := []string{dynamoBaseError}
	for _, class := range dynamoErrorClasses {
		names = append(names, "DynamoDB."+class)
	}
	slices.Sort(names)
	return names
}

// serverValidation removes the SDK's client-side check of required parameters from a call: Step Functions sends
// the request as it is and DynamoDB refuses it with its ValidationException ("1 validation error detected: Value
// null at 'item' failed to satisfy constraint: Member must not be null"), which is what the task fails with.
func serverValidation(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *smithymiddleware.Stack) error {
		_, err := s.Initialize.Remove("OperationInputValidation")
		return err
	})
}

// dynamoFailure names a DynamoDB error as Step Functions does: DynamoDB.<Java exception>, with the Java SDK's
// message format as the cause.
func dynamoFailure(err error) *failure {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return &failure{Error: dynamoBaseError, Cause: err.Error()}
	}
	code := ae.ErrorCode()
	status := 400
	reqID := ""
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
		reqID = re.ServiceRequestID()
	}
	name := DynamoDBErrorName(code)
	return &failure{Error: name, Cause: fmt.Sprintf("%s (Service: AmazonDynamoDBv2; Status Code: %d; Error Code: %s; Request ID: %s; Proxy: null)",
		ae.ErrorMessage(), status, code, reqID)}
}

// withSdkMetadata adds SdkHttpMetadata and SdkResponseMetadata built from the raw HTTP response.
func withSdkMetadata(res *jsonvalue.Object, md smithymiddleware.Metadata) *jsonvalue.Object {
	reqID, _ := awsmiddleware.GetRequestIDMetadata(md)
	byName := map[string]string{}
	status := 200
	if raw, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response); ok && raw != nil {
		status = raw.StatusCode
		for k, vs := range raw.Header {
			if len(vs) > 0 {
				byName[javaHeaderName(k)] = vs[0]
			}
		}
	}
	names := slices.Sorted(maps.Keys(byName))
	headers := jsonvalue.NewObjectKeys(names)
	for i, k := range names {
		headers.SetAt(i, byName[k])
	}
	res.Set("SdkHttpMetadata", httpMetadata(headers, status))
	res.Set("SdkResponseMetadata", jsonvalue.FromPairs("RequestId", reqID))
	return res
}

// javaHeaderName restores the spelling DynamoDB uses for its own headers.
func javaHeaderName(k string) string {
	switch http.CanonicalHeaderKey(k) {
	case "X-Amzn-Requestid":
		return "x-amzn-RequestId"
	case "X-Amz-Crc32":
		return "x-amz-crc32"
	}
	return k
}

// attributeMap converts DynamoDB JSON ({"S":"x"}, {"N":"1"}, …), an object of attribute values, into SDK
// attribute values; attributes are read in name order, so the first problem reported is stable.
func attributeMap(obj any) (map[string]types.AttributeValue, error) {
	var keys []string
	switch o := obj.(type) {
	case *jsonvalue.Object:
		keys = append(make([]string, 0, o.Len()), o.Keys()...)
	case map[string]any:
		keys = make([]string, 0, len(o))
		for k := range o {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make(map[string]types.AttributeValue, len(keys))
	for _, k := range keys {
		v, _ := jsonvalue.Lookup(obj, k)
		av, err := attributeValue(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", k, err)
		}
		out[k] = av
	}
	return out, nil
}

func attributeValue(v any) (types.AttributeValue, error) {
	var t string
	var val any
	one := false
	switch o := v.(type) {
	case *jsonvalue.Object:
		if one = o.Len() == 1; one {
			t, val = o.Keys()[0], o.Values()[0]
		}
	case map[string]any:
		if one = len(o) == 1; one {
			for k, x := range o {
				t, val = k, x
			}
		}
	}
	if !one {
		return nil, fmt.Errorf("an attribute value must be an object with exactly one type key")
	}
	switch t {
	case "S":
		s, ok := val.(string)
		if !ok {
			return nil, fmt.Errorf("S must be a string")
		}
		return &types.AttributeValueMemberS{Value: s}, nil
	case "N":
		s, ok := val.(string)
		if !ok {
			if n, isNum := val.(json.Number); isNum {
				s = string(n)
			} else {
				return nil, fmt.Errorf("N must be a string")
			}
		}
		return &types.AttributeValueMemberN{Value: s}, nil
	case "B":
		s, _ := val.(string)
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("B must be base64")
		}
		return &types.AttributeValueMemberB{Value: b}, nil
	case "BOOL":
		b, ok := val.(bool)
		if !ok {
			return nil, fmt.Errorf("BOOL must be a boolean")
		}
		return &types.AttributeValueMemberBOOL{Value: b}, nil
	case "NULL":
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case "M":
		if !jsonvalue.IsObject(val) {
			return nil, fmt.Errorf("M must be an object")
		}
		inner, err := attributeMap(val)
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberM{Value: inner}, nil
	case "L":
		arr, ok := val.([]any)
		if !ok {
			return nil, fmt.Errorf("L must be an array")
		}
		l := make([]types.AttributeValue, len(arr))
		for i, x := range arr {
			av, err := attributeValue(x)
			if err != nil {
				return nil, err
			}
			l[i] = av
		}
		return &types.AttributeValueMemberL{Value: l}, nil
	case "SS", "NS", "BS":
		arr, ok := val.([]any)
		if !ok {
			return nil, fmt.Errorf("%s must be an array", t)
		}
		ss := make([]string, len(arr))
		for i, x := range arr {
			switch s := x.(type) {
			case string:
				ss[i] = s
			case json.Number:
				ss[i] = string(s)
			default:
				return nil, fmt.Errorf("%s must hold strings", t)
			}
		}
		switch t {
		case "SS":
			return &types.AttributeValueMemberSS{Value: ss}, nil
		case "NS":
			return &types.AttributeValueMemberNS{Value: ss}, nil
		}
		bs := make([][]byte, len(ss))
		for i, s := range ss {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return nil, fmt.Errorf("BS must hold base64")
			}
			bs[i] = b
		}
		return &types.AttributeValueMemberBS{Value: bs}, nil
	}
	return nil, fmt.Errorf("unknown attribute type %q", t)
}

// attributesJSON converts SDK attribute values back to DynamoDB JSON.
func attributesJSON(m map[string]types.AttributeValue) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = attributeJSON(v)
	}
	return out
}

func attributeJSON(v types.AttributeValue) any {
	switch t := v.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": t.Value}
	case *types.AttributeValueMemberN:
		return map[string]any{"N": t.Value}
	case *types.AttributeValueMemberB:
		return map[string]any{"B": base64.StdEncoding.EncodeToString(t.Value)}
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": t.Value}
	case *types.AttributeValueMemberNULL:
		return map[string]any{"NULL": t.Value}
	case *types.AttributeValueMemberM:
		return map[string]any{"M": attributesJSON(t.Value)}
	case *types.AttributeValueMemberL:
		l := make([]any, len(t.Value))
		for i, x := range t.Value {
			l[i] = attributeJSON(x)
		}
		return map[string]any{"L": l}
	case *types.AttributeValueMemberSS:
		return map[string]any{"SS": stringsAny(t.Value)}
	case *types.AttributeValueMemberNS:
		return map[string]any{"NS": stringsAny(t.Value)}
	case *types.AttributeValueMemberBS:
		l := make([]any, len(t.Value))
		for i, b := range t.Value {
			l[i] = base64.StdEncoding.EncodeToString(b)
		}
		return map[string]any{"BS": l}
	}
	return nil
}

func stringsAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
