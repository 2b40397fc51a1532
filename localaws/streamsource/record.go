package streamsource

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// streamARN is a DynamoDB stream's ARN taken apart: arn:aws:dynamodb:REGION:ACCOUNT:table/TABLE/stream/LABEL.
type streamARN struct {
	partition, region, account, table, label string
}

func parseStreamARN(arn string) (streamARN, error) {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "dynamodb" {
		return streamARN{}, fmt.Errorf("streamsource: %q is not a DynamoDB stream ARN", arn)
	}
	res := strings.Split(parts[5], "/")
	if len(res) != 4 || res[0] != "table" || res[1] == "" || res[2] != "stream" || res[3] == "" {
		return streamARN{}, fmt.Errorf("streamsource: %q is not a DynamoDB stream ARN (want …:table/NAME/stream/LABEL)", arn)
	}
	return streamARN{partition: parts[1], region: parts[3], account: parts[4], table: res[1], label: res[3]}, nil
}

func (a streamARN) String() string {
	return fmt.Sprintf("arn:%s:dynamodb:%s:%s:table/%s/stream/%s", a.partition, a.region, a.account, a.table, a.label)
}

// awsLabel is AWS's form of a stream label: the stream's creation time, UTC, to the millisecond.
var awsLabel = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$`)

// epochLabel is Dynoxide's: the creation time in epoch seconds, with a fraction.
var epochLabel = regexp.MustCompile(`^(\d+)(?:\.(\d+))?$`)

// AWSLabel returns a stream label as AWS writes it, an ISO 8601 timestamp with milliseconds
// (2026-11-29T05:13:26.132): a label in that form is returned as it is, one in epoch seconds (Dynoxide's
// 1795929206.132175922) is converted, truncated to the millisecond.
func AWSLabel(label string) (string, error) {
	if awsLabel.MatchString(label) {
		return label, nil
	}
	m := epochLabel.FindStringSubmatch(label)
	if m == nil {
		return "", fmt.Errorf("streamsource: stream label %q is neither an ISO 8601 time nor epoch seconds", label)
	}
	sec, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return "", fmt.Errorf("streamsource: stream label %q: %w", label, err)
	}
	ms := (m[2] + "000")[:3]
	return time.Unix(sec, 0).UTC().Format("2006-01-02T15:04:05") + "." + ms, nil
}

// AWSStreamARN returns the ARN of a stream as AWS writes it, in region and account, from the ARN the DynamoDB
// server gives it: Dynoxide's arn:aws:dynamodb:dynoxide:000000000000:table/T/stream/1795929206.132175922 is
// arn:aws:dynamodb:REGION:ACCOUNT:table/T/stream/2026-11-29T05:13:26.132. It is what !GetAtt Table.StreamArn
// resolves to locally and the eventSourceARN of the records a mapping delivers.
func AWSStreamARN(serverARN, region, account string) (string, error) {
	a, err := parseStreamARN(serverARN)
	if err != nil {
		return "", err
	}
	if a.label, err = AWSLabel(a.label); err != nil {
		return "", err
	}
	a.region, a.account = region, account
	return a.String(), nil
}

// awsShardID is the form of AWS's shard ids: shardId-, 20 digits, -, 8 hex digits.
var awsShardID = regexp.MustCompile(`^shardId-\d{20}-[0-9a-f]{8}$`)

var digits = regexp.MustCompile(`\d+`)

// AWSShardID returns a shard id in AWS's form, shardId-<20 digits>-<8 hex digits>: an id in that form is returned
// as it is; another (Dynoxide's shardId-00000001-TABLE) becomes shardId-, its first number on 20 digits, -, and
// the first 8 hex digits of its SHA-256, so that it is the same at every start.
func AWSShardID(id string) string {
	if awsShardID.MatchString(id) {
		return id
	}
	n := digits.FindString(id)
	if len(n) > 20 {
		n = n[len(n)-20:]
	}
	sum := sha256.Sum256([]byte(id))
	return "shardId-" + strings.Repeat("0", 20-len(n)) + n + "-" + hex.EncodeToString(sum[:4])
}

// seqDigits is how many digits AWS's sequence numbers have at least.
const seqDigits = 21

// AWSSequenceNumber returns a sequence number as Lambda delivers it: a number written with fewer than 21 digits
// (Dynoxide's 1, 2, …) is padded with zeros to 21, so that comparing the strings compares the numbers, as with
// AWS's; anything else is returned as it is.
func AWSSequenceNumber(seq string) string {
	if len(seq) >= seqDigits || strings.Trim(seq, "0123456789") != "" {
		return seq
	}
	return strings.Repeat("0", seqDigits-len(seq)) + seq
}

// eventID is a record's eventID: 32 hex digits, as AWS's, made from the stream, the shard and the sequence number,
// so that a record delivered again has the same id.
func eventID(stream, shard, seq string) string {
	sum := sha256.Sum256([]byte(stream + "\x00" + shard + "\x00" + seq))
	return hex.EncodeToString(sum[:16])
}

// lambdaRecord is one element of the Records of the event Lambda sends a function for a DynamoDB stream, in the
// order of AWS's fields (events.DynamoDBEventRecord in aws-lambda-go).
type lambdaRecord struct {
	EventID        string         `json:"eventID"`
	EventName      string         `json:"eventName"`
	EventVersion   string         `json:"eventVersion"`
	EventSource    string         `json:"eventSource"`
	AWSRegion      string         `json:"awsRegion"`
	DynamoDB       lambdaDynamoDB `json:"dynamodb"`
	EventSourceARN string         `json:"eventSourceARN"`
	UserIdentity   *userIdentity  `json:"userIdentity,omitempty"`
}

type lambdaDynamoDB struct {
	ApproximateCreationDateTime json.Number    `json:"ApproximateCreationDateTime"`
	Keys                        map[string]any `json:"Keys"`
	NewImage                    map[string]any `json:"NewImage,omitempty"`
	OldImage                    map[string]any `json:"OldImage,omitempty"`
	SequenceNumber              string         `json:"SequenceNumber"`
	SizeBytes                   int64          `json:"SizeBytes"`
	StreamViewType              string         `json:"StreamViewType"`
}

type userIdentity struct {
	Type        string `json:"type"`
	PrincipalID string `json:"principalId"`
}

// epochSeconds writes t as Lambda writes ApproximateCreationDateTime: epoch seconds, a whole number when t has no
// fraction of a second.
func epochSeconds(t time.Time) json.Number {
	if t.Nanosecond() == 0 {
		return json.Number(strconv.FormatInt(t.Unix(), 10))
	}
	return json.Number(strconv.FormatFloat(float64(t.UnixNano())/1e9, 'f', -1, 64))
}

// normalize turns a record as DynamoDB Streams' GetRecords gives it into the record Lambda delivers: AWS's
// eventID, region, stream ARN and sequence number.
func normalize(r types.Record, region, awsStream, serverStream, shard string) (lambdaRecord, error) {
	if r.Dynamodb == nil || r.Dynamodb.SequenceNumber == nil {
		return lambdaRecord{}, errors.New("streamsource: a stream record without dynamodb.SequenceNumber")
	}
	d := r.Dynamodb
	seq := aws.ToString(d.SequenceNumber)
	out := lambdaRecord{
		EventID:        eventID(serverStream, shard, seq),
		EventName:      string(r.EventName),
		EventVersion:   aws.ToString(r.EventVersion),
		EventSource:    aws.ToString(r.EventSource),
		AWSRegion:      region,
		EventSourceARN: awsStream,
		DynamoDB: lambdaDynamoDB{
			SequenceNumber: AWSSequenceNumber(seq),
			SizeBytes:      aws.ToInt64(d.SizeBytes),
			StreamViewType: string(d.StreamViewType),
		},
	}
	if out.EventVersion == "" {
		out.EventVersion = "1.1"
	}
	if out.EventSource == "" {
		out.EventSource = "aws:dynamodb"
	}
	if d.ApproximateCreationDateTime != nil {
		out.DynamoDB.ApproximateCreationDateTime = epochSeconds(*d.ApproximateCreationDateTime)
	} else {
		out.DynamoDB.ApproximateCreationDateTime = "0"
	}
	var err error
	if out.DynamoDB.Keys, err = attributeMap(d.Keys); err != nil {
		return lambdaRecord{}, err
	}
	if out.DynamoDB.Keys == nil {
		out.DynamoDB.Keys = map[string]any{}
	}
	if out.DynamoDB.NewImage, err = attributeMap(d.NewImage); err != nil {
		return lambdaRecord{}, err
	}
	if out.DynamoDB.OldImage, err = attributeMap(d.OldImage); err != nil {
		return lambdaRecord{}, err
	}
	if u := r.UserIdentity; u != nil {
		out.UserIdentity = &userIdentity{Type: aws.ToString(u.Type), PrincipalID: aws.ToString(u.PrincipalId)}
	}
	return out, nil
}

// attributeMap writes attribute values in DynamoDB's JSON form ({"S": "x"}, {"N": "1"}, {"M": {…}}, …); nil for
// an empty map, which the record then leaves out.
func attributeMap(m map[string]types.AttributeValue) (map[string]any, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		j, err := attributeValue(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = j
	}
	return out, nil
}

func attributeValue(v types.AttributeValue) (any, error) {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": v.Value}, nil
	case *types.AttributeValueMemberN:
		return map[string]any{"N": v.Value}, nil
	case *types.AttributeValueMemberB:
		return map[string]any{"B": v.Value}, nil // []byte: base64, as DynamoDB's JSON has it
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}, nil
	case *types.AttributeValueMemberNULL:
		return map[string]any{"NULL": v.Value}, nil
	case *types.AttributeValueMemberSS:
		return map[string]any{"SS": v.Value}, nil
	case *types.AttributeValueMemberNS:
		return map[string]any{"NS": v.Value}, nil
	case *types.AttributeValueMemberBS:
		return map[string]any{"BS": v.Value}, nil
	case *types.AttributeValueMemberL:
		l := make([]any, len(v.Value))
		for i, e := range v.Value {
			j, err := attributeValue(e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			l[i] = j
		}
		return map[string]any{"L": l}, nil
	case *types.AttributeValueMemberM:
		m, err := attributeMap(v.Value)
		if err != nil {
			return nil, err
		}
		if m == nil {
			m = map[string]any{}
		}
		return map[string]any{"M": m}, nil
	}
	return nil, fmt.Errorf("streamsource: attribute value of type %T", v)
}

// filterView is the record as a filter sees it: the value json.Unmarshal gives for the record's JSON (numbers as
// float64, binary values as base64 strings, every list as []any), built without writing the JSON, which a poll
// needs only for the records that pass the filters.
func (r *lambdaRecord) filterView() map[string]any {
	ddb := map[string]any{
		"ApproximateCreationDateTime": jsonView(r.DynamoDB.ApproximateCreationDateTime),
		"Keys":                        jsonView(r.DynamoDB.Keys),
		"SequenceNumber":              r.DynamoDB.SequenceNumber,
		"SizeBytes":                   float64(r.DynamoDB.SizeBytes),
		"StreamViewType":              r.DynamoDB.StreamViewType,
	}
	if len(r.DynamoDB.NewImage) > 0 {
		ddb["NewImage"] = jsonView(r.DynamoDB.NewImage)
	}
	if len(r.DynamoDB.OldImage) > 0 {
		ddb["OldImage"] = jsonView(r.DynamoDB.OldImage)
	}
	v := map[string]any{
		"eventID": r.EventID, "eventName": r.EventName, "eventVersion": r.EventVersion, "eventSource": r.EventSource,
		"awsRegion": r.AWSRegion, "dynamodb": ddb, "eventSourceARN": r.EventSourceARN,
	}
	if u := r.UserIdentity; u != nil {
		v["userIdentity"] = map[string]any{"type": u.Type, "principalId": u.PrincipalID}
	}
	return v
}

// jsonView returns what json.Unmarshal into an any gives for the JSON of v, for the values attributeValue makes.
func jsonView(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = jsonView(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = jsonView(e)
		}
		return out
	case []string:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = e
		}
		return out
	case []byte:
		return base64.StdEncoding.EncodeToString(v)
	case [][]byte:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = base64.StdEncoding.EncodeToString(e)
		}
		return out
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return string(v)
		}
		return f
	}
	return v
}
