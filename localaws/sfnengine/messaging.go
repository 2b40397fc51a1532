package sfnengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// SQSAPI is what Options.SQS needs; *sqs.Client satisfies it. Its calls must return soon after their context is done.
type SQSAPI interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, opts ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// SNSAPI is what Options.SNS needs; *sns.Client satisfies it. Its calls must return soon after their context is done.
type SNSAPI interface {
	Publish(ctx context.Context, in *sns.PublishInput, opts ...func(*sns.Options)) (*sns.PublishOutput, error)
}

// The error names of the optimized SQS and SNS integrations for a call that got no answer from the service (or
// that has no client to go to). A refused call is named <prefix>.<the service's exception>, e.g.
// SQS.QueueDoesNotExistException or SNS.NotFoundException (see serviceErrorName).
const (
	SQSSdkClientError = "SQS.SdkClientException"
	SNSSdkClientError = "SNS.SdkClientException"
)

// sqsSendMessage runs arn:aws:states:::sqs:sendMessage: Parameters are SendMessage's (QueueUrl, MessageBody,
// DelaySeconds, MessageAttributes, MessageDeduplicationId, MessageGroupId); a MessageBody that is not a string is
// sent as its JSON text, as AWS does. The result is SendMessage's answer with the SDK's HTTP metadata.
func sqsSendMessage(ctx context.Context, x *execution, params any) (any, *failure) {
	c := x.eng.opts.SQS
	if c == nil {
		return nil, &failure{Error: SQSSdkClientError, Cause: "no SQS client is configured (the local stack wires one when AWS_ENDPOINT_URL_SQS is set)"}
	}
	p := messageParams{svc: "sqs:sendMessage", params: params}
	in := &sqs.SendMessageInput{QueueUrl: p.str("QueueUrl", true), MessageBody: p.text("MessageBody", true),
		MessageDeduplicationId: p.str("MessageDeduplicationId", false), MessageGroupId: p.str("MessageGroupId", false)}
	if d := p.int("DelaySeconds"); d != nil {
		in.DelaySeconds = *d
	}
	for name, a := range p.attributes() {
		if in.MessageAttributes == nil {
			in.MessageAttributes = map[string]sqstypes.MessageAttributeValue{}
		}
		in.MessageAttributes[name] = sqstypes.MessageAttributeValue{DataType: a.dataType, StringValue: a.str, BinaryValue: a.bin}
	}
	if p.fail != nil {
		return nil, p.fail
	}
	out, err := c.SendMessage(ctx, in)
	if err != nil {
		return nil, serviceFailure("SQS", "AmazonSQS", err)
	}
	res := jsonvalue.NewObject(6)
	setString(res, "MD5OfMessageAttributes", out.MD5OfMessageAttributes)
	setString(res, "MD5OfMessageBody", out.MD5OfMessageBody)
	setString(res, "MessageId", out.MessageId)
	setString(res, "SequenceNumber", out.SequenceNumber)
	addSdkMetadata(x, res, "application/x-amz-json-1.0")
	return res, nil
}

// snsPublish runs arn:aws:states:::sns:publish: Parameters are Publish's (TopicArn, TargetArn, PhoneNumber,
// Message, Subject, MessageStructure, MessageAttributes, MessageDeduplicationId, MessageGroupId); a Message that is
// not a string is sent as its JSON text. The result is Publish's answer with the SDK's HTTP metadata.
func snsPublish(ctx context.Context, x *execution, params any) (any, *failure) {
	c := x.eng.opts.SNS
	if c == nil {
		return nil, &failure{Error: SNSSdkClientError, Cause: "no SNS client is configured (the local stack wires one when AWS_ENDPOINT_URL_SNS is set)"}
	}
	p := messageParams{svc: "sns:publish", params: params}
	in := &sns.PublishInput{TopicArn: p.str("TopicArn", false), TargetArn: p.str("TargetArn", false),
		PhoneNumber: p.str("PhoneNumber", false), Message: p.text("Message", true), Subject: p.str("Subject", false),
		MessageStructure: p.str("MessageStructure", false), MessageDeduplicationId: p.str("MessageDeduplicationId", false),
		MessageGroupId: p.str("MessageGroupId", false)}
	for name, a := range p.attributes() {
		if in.MessageAttributes == nil {
			in.MessageAttributes = map[string]snstypes.MessageAttributeValue{}
		}
		in.MessageAttributes[name] = snstypes.MessageAttributeValue{DataType: a.dataType, StringValue: a.str, BinaryValue: a.bin}
	}
	if p.fail == nil && in.TopicArn == nil && in.TargetArn == nil && in.PhoneNumber == nil {
		p.badf("one of Parameters.TopicArn, TargetArn or PhoneNumber is required")
	}
	if p.fail != nil {
		return nil, p.fail
	}
	out, err := c.Publish(ctx, in)
	if err != nil {
		return nil, serviceFailure("SNS", "AmazonSNS", err)
	}
	res := jsonvalue.NewObject(4)
	setString(res, "MessageId", out.MessageId)
	setString(res, "SequenceNumber", out.SequenceNumber)
	addSdkMetadata(x, res, "text/xml")
	return res, nil
}

// setString sets key to *v when v is not nil.
func setString(o *jsonvalue.Object, key string, v *string) {
	if v != nil {
		o.Set(key, *v)
	}
}

// addSdkMetadata adds the SdkHttpMetadata and SdkResponseMetadata members AWS's integrations add to a result.
func addSdkMetadata(x *execution, res *jsonvalue.Object, contentType string) {
	id := NewUUID()
	headers := jsonvalue.FromPairs("Content-Type", contentType, "Date", httpDate(x.eng.opts.Clock.Now()), "x-amzn-RequestId", id)
	res.Set("SdkHttpMetadata", httpMetadata(headers, 200))
	res.Set("SdkResponseMetadata", jsonvalue.FromPairs("RequestId", id))
}

// messageParams reads a messaging task's Parameters; the first problem is kept in fail, as States.Runtime.
type messageParams struct {
	svc    string
	params any
	fail   *failure
}

func (p *messageParams) badf(format string, args ...any) {
	if p.fail == nil {
		p.fail = &failure{Error: ErrNameRuntime, Cause: p.svc + ": " + fmt.Sprintf(format, args...)}
	}
}

// str reads a string parameter (nil when absent and not required).
func (p *messageParams) str(key string, required bool) *string {
	v, ok := jsonvalue.Lookup(p.params, key)
	if !ok || v == nil {
		if required {
			p.badf("Parameters.%s is required", key)
		}
		return nil
	}
	s, isStr := v.(string)
	if !isStr {
		p.badf("Parameters.%s must be a string", key)
		return nil
	}
	return aws.String(s)
}

// text reads a string parameter, or any other JSON value as its JSON text.
func (p *messageParams) text(key string, required bool) *string {
	v, ok := jsonvalue.Lookup(p.params, key)
	if !ok || v == nil {
		if required {
			p.badf("Parameters.%s is required", key)
		}
		return nil
	}
	if s, isStr := v.(string); isStr {
		return aws.String(s)
	}
	return aws.String(marshal(v))
}

// int reads an integer parameter.
func (p *messageParams) int(key string) *int32 {
	v, ok := jsonvalue.Lookup(p.params, key)
	if !ok || v == nil {
		return nil
	}
	num, isNum := v.(json.Number)
	n, err := strconv.ParseInt(string(num), 10, 32)
	if !isNum || err != nil {
		p.badf("Parameters.%s must be an integer", key)
		return nil
	}
	i := int32(n)
	return &i
}

// messageAttribute is one MessageAttributes entry: {"DataType", "StringValue" | "BinaryValue"}.
type messageAttribute struct {
	dataType, str *string
	bin           []byte
}

// attributes reads Parameters.MessageAttributes.
func (p *messageParams) attributes() map[string]messageAttribute {
	v, ok := jsonvalue.Lookup(p.params, "MessageAttributes")
	if !ok || v == nil {
		return nil
	}
	obj, isObj := v.(*jsonvalue.Object)
	if !isObj {
		p.badf("Parameters.MessageAttributes must be an object")
		return nil
	}
	out := make(map[string]messageAttribute, obj.Len())
	for i, name := range obj.Keys() {
		entry := messageParams{svc: p.svc, params: obj.Values()[i]}
		a := messageAttribute{dataType: entry.str("DataType", true), str: entry.str("StringValue", false)}
		if b := entry.str("BinaryValue", false); b != nil {
			a.bin = []byte(*b)
		}
		if entry.fail != nil {
			p.badf("Parameters.MessageAttributes.%s: %s", name, strings.TrimPrefix(entry.fail.Cause, p.svc+": "))
			return nil
		}
		out[name] = a
	}
	return out
}

// serviceFailure names a failed call of an optimized integration as AWS does: <prefix>.<exception> for a refusal,
// with the service's message and the SDK's details as the cause; <prefix>.SdkClientException for a call that got
// no answer.
func serviceFailure(prefix, service string, err error) *failure {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return &failure{Error: prefix + ".SdkClientException", Cause: "Unable to execute HTTP request: " + err.Error()}
	}
	return &failure{Error: serviceErrorName(prefix, ae),
		Cause: fmt.Sprintf("%s (Service: %s; Status Code: 400; Error Code: %s; Request ID: %s; Proxy: null)",
			ae.ErrorMessage(), service, ae.ErrorCode(), NewUUID())}
}

// serviceErrorName is <prefix>.<name>Exception, the name being the SDK's modelled exception type when the error
// is one (SQS answers QueueDoesNotExist with the legacy code AWS.SimpleQueueService.NonExistentQueue; the exception
// is still QueueDoesNotExistException), else the wire error code.
func serviceErrorName(prefix string, ae smithy.APIError) string {
	name := ae.ErrorCode()
	if t := reflect.TypeOf(ae); t.Kind() == reflect.Pointer && t.Elem().Name() != "GenericAPIError" {
		name = t.Elem().Name()
	}
	if !strings.HasSuffix(name, "Exception") {
		name += "Exception"
	}
	return prefix + "." + name
}
