package sfnengine_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// TestFormatTemplateFromAVariable: States.Format takes its template from a variable or a path as well as from a
// string literal, as in AWS's recorded execution of this machine (each item announced as "It's <name>!").
func TestFormatTemplateFromAVariable(t *testing.T) {
	eng := newEngine(t, sfnengine.Options{})
	for _, tc := range []struct{ name, assign, result, template string }{
		{"a variable", `"AnswerTemplate":"It's {}!",`, `["Charizard","Pikachu"]`, `$AnswerTemplate`},
		{"a path", ``, `{"AnswerTemplate":"It's {}!","Names":["Charizard","Pikachu"]}`, `$.AnswerTemplate`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			itemsPath := `"ItemsPath":"$",`
			if tc.assign == "" {
				itemsPath = `"ItemsPath":"$.Names",`
			}
			def := `{"StartAt":"Start","States":{
			  "Start":{"Type":"Pass","Assign":{` + tc.assign + `"Question":"Who's that Pokemon?"},"Result":` + tc.result + `,"Next":"M"},
			  "M":{"Type":"Map","MaxConcurrency":1,` + itemsPath + `
			    "ItemSelector":{"AnnouncePokemon.$":"States.Format(` + tc.template + `, $$.Map.Item.Value)"},
			    "ItemProcessor":{"ProcessorConfig":{"Mode":"INLINE"},"StartAt":"Pass","States":{
			      "Pass":{"Type":"Pass","Parameters":{"Question.$":"$Question","Answer.$":"$.AnnouncePokemon"},"End":true}}},
			    "End":true}}}`
			rec := run(t, eng, def, `{}`)
			want := `[{"Question":"Who's that Pokemon?","Answer":"It's Charizard!"},{"Question":"Who's that Pokemon?","Answer":"It's Pikachu!"}]`
			var got, wantV any
			_ = json.Unmarshal([]byte(deref(rec.Output)), &got)
			_ = json.Unmarshal([]byte(want), &wantV)
			if rec.Status != sfnengine.StatusSucceeded || !jsonEqual(got, wantV) {
				t.Fatalf("%s %s %s: output %s, want %s", rec.Status, deref(rec.Error), deref(rec.Cause), deref(rec.Output), want)
			}
		})
	}
}

// TestJSONataMapOverAnEmptyArray: a JSONata path to a field holding [] yields [] (not nothing), so a Map over it,
// through Output or Items, succeeds with [] after MapStateStarted with length 0, as AWS records for
// `$states.input.items` on {"items": []}.
func TestJSONataMapOverAnEmptyArray(t *testing.T) {
	eng := newEngine(t, sfnengine.Options{})
	processor := `"ItemProcessor":{"ProcessorConfig":{"Mode":"INLINE"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`
	for _, tc := range []struct{ name, def string }{
		{"the input from Output", `{"QueryLanguage":"JSONata","StartAt":"Start","States":{
		  "Start":{"Type":"Pass","Output":"{% $states.input.items %}","Next":"M"},
		  "M":{"Type":"Map","MaxConcurrency":1,` + processor + `,"End":true}}}`},
		{"Items", `{"QueryLanguage":"JSONata","StartAt":"M","States":{
		  "M":{"Type":"Map","Items":"{% $states.input.items %}",` + processor + `,"End":true}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := run(t, eng, tc.def, `{"items":[]}`)
			if rec.Status != sfnengine.StatusSucceeded || deref(rec.Output) != `[]` {
				t.Fatalf("%s %s %s: output %s, want []", rec.Status, deref(rec.Error), deref(rec.Cause), deref(rec.Output))
			}
			started := findEvent(rec.History, sfnengine.EventMapStateStarted)
			if started == nil || fmt.Sprint(started.Details["length"]) != "0" {
				t.Fatalf("MapStateStarted %+v in %s", started, eventTypes(rec.History))
			}
		})
	}
}
