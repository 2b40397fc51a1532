package asl_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/transferflow/orchestrator/localaws/asl"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// FuzzParseValidate parses and validates any document. Parse fails only on text that is not a JSON object; a parsed
// definition, re-encoded and parsed again, is the same definition with the same problems; both stages give the same
// answer every time (problems in the same order); every problem is a positioned *asl.Error; and Load agrees with
// Parse followed by Validate. The seed corpus is the repository's definitions, the literals below and, in
// testdata/fuzz, one definition of each category of the ASL conformance corpus (from LocalStack's snapshot tests of
// AWS Step Functions, Apache-2.0).
func FuzzParseValidate(f *testing.F) {
	for _, name := range []string{
		filepath.Join("..", "..", "statemachine", "transfer.asl.json"),
		filepath.Join("..", "sfnengine", "testdata", "saga.asl.json"),
		filepath.Join("..", "sfnapi", "testdata", "saga-jsonata.asl.json"),
	} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatalf("seed corpus: %v", err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		`{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}`,
		`{}`, `[]`, `{`, `"x"`, `{"StartAt":"B","States":{"A":{"Type":"Pass","End":true}}}`,
		`{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"Z","End":true}},"Extra":1,"Other":2}`,
		`{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","End":true,
			"Retry":[{"ErrorEquals":["States.ALL"],"BackoffRate":0.5,"MaxAttempts":-1}],"Catch":[{"ErrorEquals":["X"],"Next":"Q"}]}}}`,
		`{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"And":[{"Variable":"$.a","NumericGreaterThan":1e400},
			{"Not":{"Variable":"$.b","StringMatches":"a*"}}],"Next":"D"}],"Default":"D"},"D":{"Type":"Succeed"}}}`,
		`{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","MaxConcurrency":2,"ItemProcessor":{
			"ProcessorConfig":{"Mode":"INLINE"},"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},"End":true}}}`,
		`{"StartAt":"P","States":{"P":{"Type":"Parallel","Branches":[{"StartAt":"X","States":{"X":{"Type":"Wait","Seconds":1,"End":true}}}],
			"Parameters":{"a.$":"States.Format('{}', $.x)","b.$":"$$.Execution.Id"},"ResultPath":"$.p","End":true}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return
		}
		def, err := asl.Parse(data)
		def2, err2 := asl.Parse(data)
		if dump(def) != dump(def2) || fmt.Sprint(err) != fmt.Sprint(err2) {
			t.Fatalf("two parses differ:\n%s %v\n%s %v", dump(def), err, dump(def2), err2)
		}
		_, loadErr := asl.Load(data)
		if err != nil {
			var e *asl.Error
			if def != nil || !errors.As(err, &e) || fmt.Sprint(loadErr) != fmt.Sprint(err) {
				t.Fatalf("parse error %v (definition %v), load error %v", err, def, loadErr)
			}
			if _, ok := jsonvalue.AsMap(decodeOrNil(data)); ok {
				t.Fatalf("a JSON object was refused: %v", err)
			}
			return
		}
		verr := asl.Validate(def)
		if again := asl.Validate(def2); fmt.Sprint(again) != fmt.Sprint(verr) {
			t.Fatalf("two validations differ:\n%v\n%v", verr, again)
		}
		if fmt.Sprint(loadErr) != fmt.Sprint(verr) {
			t.Fatalf("Load says %v, Parse and Validate %v", loadErr, verr)
		}
		if verr != nil {
			problems := asl.Errors(verr)
			if len(problems) == 0 {
				t.Fatalf("validation error %v has no positioned problems", verr)
			}
			for _, p := range problems {
				if p.Msg == "" {
					t.Fatalf("problem %+v without a message", p)
				}
			}
		}

		// Re-encoded, the document is the same definition. (Text that is not UTF-8 is not compared: re-encoding
		// replaces its invalid bytes with U+FFFD, as every JSON encoder does.)
		if !utf8.Valid(data) {
			return
		}
		v, err := asl.Decode(data)
		if err != nil {
			t.Fatalf("parsed but does not decode: %v", err)
		}
		text := jsonvalue.Marshal(v)
		back, err := asl.Parse([]byte(text))
		if err != nil {
			t.Fatalf("re-encoded %s does not parse: %v", text, err)
		}
		if dump(back) != dump(def) || fmt.Sprint(asl.Validate(back)) != fmt.Sprint(verr) {
			t.Fatalf("re-encoded %s parses differently:\n%s\n%s\n%v\n%v", text, dump(def), dump(back), verr, asl.Validate(back))
		}
	})
}

func decodeOrNil(data []byte) any {
	v, err := asl.Decode(data)
	if err != nil {
		return nil
	}
	return v
}

// dump renders a parsed definition, every exported field, for comparison.
func dump(def *asl.Definition) string {
	if def == nil {
		return "<nil>"
	}
	b, err := json.Marshal(def)
	if err != nil {
		return "unencodable: " + err.Error()
	}
	return string(b)
}
