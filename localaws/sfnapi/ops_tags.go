package sfnapi

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// Wire error types of tagging.
const (
	codeTooManyTags = "TooManyTags"
)

// Tag limits of the API model and of AWS's tagging rules.
const (
	maxTagKeyLength   = 128
	maxTagValueLength = 256
	// reservedTagPrefix starts the keys that only AWS may set.
	reservedTagPrefix = "aws:"
)

// tagCharsRE is what a tag key or value may contain: Unicode letters, digits, white space and _ . : / = + - @.
var tagCharsRE = regexp.MustCompile(`^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$`)

func init() {
	resource := arnMember("resourceArn", true)
	models["TagResource"] = []member{resource}
	models["UntagResource"] = []member{resource}
	models["ListTagsForResource"] = []member{resource}
	wireErrors = append(wireErrors, []wireError{
		{sfnengine.ErrResourceNotFound, codeResourceNotFound, "Resource Not Found: '%s'"},
		{sfnengine.ErrTooManyTags, codeTooManyTags, "Too many tags: '%s'"},
	}...)
	// The subject of ErrResourceNotFound is the resource's ARN; that of ErrTooManyTags starts with it.
	wireFields[sfnengine.ErrResourceNotFound] = func(arn string) map[string]string {
		return map[string]string{"resourceName": arn}
	}
	wireFields[sfnengine.ErrTooManyTags] = func(subject string) map[string]string {
		arn, _, _ := strings.Cut(subject, " ")
		return map[string]string{"resourceName": arn}
	}
}

// tag is a tag in the API's shape.
type tag struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// tagMap checks tags as AWS does (keys 1-128 characters, values at most 256, only letters, digits, white space and
// _ . : / = + - @, no key starting with "aws:") and returns them as a map, or a ValidationException listing every
// problem, each at its member's path (member is the list's name: "tags").
func tagMap(member string, tags []tag) (map[string]string, error) {
	var violations []string
	for i, t := range tags {
		at := fmt.Sprintf("%s.%d.member", member, i+1)
		violations = append(violations, checkTagKey(at+".key", t.Key)...)
		switch {
		case utf8.RuneCountInString(t.Value) > maxTagValueLength:
			violations = append(violations, fmt.Sprintf("Value '%s' at '%s.value' failed to satisfy constraint: Member must have length less than or equal to %d", t.Value, at, maxTagValueLength))
		case !tagCharsRE.MatchString(t.Value):
			violations = append(violations, fmt.Sprintf("Value '%s' at '%s.value' failed to satisfy constraint: Member must satisfy regular expression pattern: %s", t.Value, at, tagCharsRE))
		}
	}
	if err := validationError(violations); err != nil {
		return nil, err
	}
	if len(tags) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(tags))
	for _, t := range tags {
		out[t.Key] = t.Value
	}
	return out, nil
}

// checkTagKey returns the violations of a tag key at path.
func checkTagKey(path, key string) []string {
	switch n := utf8.RuneCountInString(key); {
	case n < 1:
		return []string{fmt.Sprintf("Value '%s' at '%s' failed to satisfy constraint: Member must have length greater than or equal to 1", key, path)}
	case n > maxTagKeyLength:
		return []string{fmt.Sprintf("Value '%s' at '%s' failed to satisfy constraint: Member must have length less than or equal to %d", key, path, maxTagKeyLength)}
	case !tagCharsRE.MatchString(key):
		return []string{fmt.Sprintf("Value '%s' at '%s' failed to satisfy constraint: Member must satisfy regular expression pattern: %s", key, path, tagCharsRE)}
	case strings.HasPrefix(strings.ToLower(key), reservedTagPrefix):
		return []string{fmt.Sprintf("Value '%s' at '%s' failed to satisfy constraint: Tag keys prefixed with '%s' are reserved for AWS use", key, path, reservedTagPrefix)}
	}
	return nil
}

// validationError returns one ValidationException with every violation, as validate does, or nil.
func validationError(violations []string) error {
	switch len(violations) {
	case 0:
		return nil
	case 1:
		return errorf(codeValidation, "1 validation error detected: %s", violations[0])
	}
	return errorf(codeValidation, "%d validation errors detected: %s", len(violations), strings.Join(violations, "; "))
}

// tagList renders tags in the API's shape, by key.
func tagList(tags map[string]string) []tag {
	out := make([]tag, 0, len(tags))
	for k, v := range tags {
		out = append(out, tag{Key: k, Value: v})
	}
	slices.SortFunc(out, func(a, b tag) int { return strings.Compare(a.Key, b.Key) })
	return out
}

func (s *Server) tagResource(ctx context.Context, body json.RawMessage) (any, error) {
	var in struct {
		ResourceArn string `json:"resourceArn"`
		Tags        *[]tag `json:"tags"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if in.Tags == nil {
		return nil, errorf(codeValidation, "1 validation error detected: Value null at 'tags' failed to satisfy constraint: Member must not be null")
	}
	tags, err := tagMap("tags", *in.Tags)
	if err != nil {
		return nil, err
	}
	return struct{}{}, s.eng.TagResource(ctx, in.ResourceArn, tags)
}

func (s *Server) untagResource(ctx context.Context, body json.RawMessage) (any, error) {
	var in struct {
		ResourceArn string    `json:"resourceArn"`
		TagKeys     *[]string `json:"tagKeys"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if in.TagKeys == nil {
		return nil, errorf(codeValidation, "1 validation error detected: Value null at 'tagKeys' failed to satisfy constraint: Member must not be null")
	}
	var violations []string
	for i, k := range *in.TagKeys {
		if n := utf8.RuneCountInString(k); n < 1 || n > maxTagKeyLength {
			violations = append(violations, checkTagKey(fmt.Sprintf("tagKeys.%d.member", i+1), k)...)
		}
	}
	if err := validationError(violations); err != nil {
		return nil, err
	}
	return struct{}{}, s.eng.UntagResource(ctx, in.ResourceArn, *in.TagKeys)
}

func (s *Server) listTagsForResource(ctx context.Context, body json.RawMessage) (any, error) {
	var in struct {
		ResourceArn string `json:"resourceArn"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	tags, err := s.eng.ListTagsForResource(ctx, in.ResourceArn)
	if err != nil {
		return nil, err
	}
	return map[string]any{"tags": tagList(tags)}, nil
}
