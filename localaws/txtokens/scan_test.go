package txtokens

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// withoutToken is body decoded, without its ClientRequestToken: what split's stripped body must decode to.
func withoutToken(t testing.TB, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	delete(m, "ClientRequestToken")
	return m
}

func TestSplit(t *testing.T) {
	items := `[{"Update":{"Key":{"pk":{"S":"a"}},"ExpressionAttributeValues":{":n":{"N":"1"},":t":{"BOOL":true}}}}]`
	for _, body := range []string{
		`{"ClientRequestToken":"tok","TransactItems":` + items + `}`,
		`{"TransactItems":` + items + `,"ClientRequestToken":"tok"}`,
		`{"ReturnConsumedCapacity":"TOTAL","ClientRequestToken":"tok","TransactItems":` + items + `}`,
		" {\n \"TransactItems\" : " + items + " ,\n \"ClientRequestToken\" : \"tok\" \n} ",
	} {
		token, stripped, _, ok := split([]byte(body))
		if !ok || token != "tok" {
			t.Fatalf("%s: token %q, ok %v", body, token, ok)
		}
		if strings.Contains(string(stripped), "ClientRequestToken") {
			t.Errorf("%s: stripped %s still has the token", body, stripped)
		}
		if got, want := withoutToken(t, stripped), withoutToken(t, []byte(body)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: stripped %s decodes to %v, want %v", body, stripped, got, want)
		}
	}

	if token, _, _, ok := split([]byte(`{"ClientRequestToken":"a\"b\u0063","TransactItems":[]}`)); !ok || token != `a"bc` {
		t.Errorf("escaped token: %q, %v", token, ok)
	}
	for _, body := range []string{
		`{"TransactItems":` + items + `}`,              // no token
		`{"ClientRequestToken":"tok"}`,                 // no items
		`{"ClientRequestToken":"","TransactItems":[]}`, // an empty token
		`{"ClientRequestToken":"tok","TransactItems":[}`,
		`{"ClientRequestToken":"tok","TransactItems":[],}`,
		`{"ClientRequestToken":"tok","TransactItems":[]} x`,
		`["ClientRequestToken"]`,
		``,
	} {
		if _, _, _, ok := split([]byte(body)); ok {
			t.Errorf("%s: split, want it passed on as it is", body)
		}
	}
}

// TestItemsDigest: the digest ignores the order of an object's members (the SDK writes Go maps in random order),
// and nothing else: not the order of an array, not a value, not a name.
func TestItemsDigest(t *testing.T) {
	digestOf := func(items string) digest {
		t.Helper()
		_, _, d, ok := split([]byte(`{"ClientRequestToken":"t","TransactItems":` + items + `}`))
		if !ok {
			t.Fatalf("%s: not split", items)
		}
		return d
	}
	base := digestOf(`[{"Put":{"Item":{"a":{"N":"1"},"b":{"S":"x"}}}},{"ConditionCheck":{"Key":{"pk":{"S":"k"}}}}]`)
	if d := digestOf(`[ {"Put":{"Item":{"b":{"S":"x"}, "a":{"N":"1"}}}}, {"ConditionCheck":{"Key":{"pk":{"S":"k"}}}} ]`); d != base {
		t.Error("members in another order (and white space) changed the digest")
	}
	for _, other := range []string{
		`[{"ConditionCheck":{"Key":{"pk":{"S":"k"}}}},{"Put":{"Item":{"a":{"N":"1"},"b":{"S":"x"}}}}]`,
		`[{"Put":{"Item":{"a":{"N":"2"},"b":{"S":"x"}}}},{"ConditionCheck":{"Key":{"pk":{"S":"k"}}}}]`,
		`[{"Put":{"Item":{"a":{"N":"1"},"c":{"S":"x"}}}},{"ConditionCheck":{"Key":{"pk":{"S":"k"}}}}]`,
		`[{"Put":{"Item":{"a":{"N":"1"},"b":{"S":"x"}}}},{"ConditionCheck":{"Key":{"pk":{"S":"k"}}}},{}]`,
		`[{"Put":{"Item":{"a":{"S":"1"},"b":{"S":"x"}}}},{"ConditionCheck":{"Key":{"pk":{"S":"k"}}}}]`,
	} {
		if digestOf(other) == base {
			t.Errorf("%s: the same digest as the base items", other)
		}
	}
}

// FuzzSplit: whatever the body, a split one decodes to the body without its token.
func FuzzSplit(f *testing.F) {
	f.Add([]byte(`{"ClientRequestToken":"tok","TransactItems":[{"Put":{"Item":{"a":{"N":"1"}}}}]}`))
	f.Add([]byte(`{"TransactItems":[],"ClientRequestToken":"t","ReturnConsumedCapacity":"TOTAL"}`))
	f.Add([]byte(` { "ClientRequestToken" : "a\\\"b" , "TransactItems" : [ 1 , true , null , "x" ] } `))
	f.Fuzz(func(t *testing.T, body []byte) {
		token, stripped, _, ok := split(body)
		if !ok {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			return // split is more lenient than encoding/json (the server then refuses what it passes on)
		}
		if m["ClientRequestToken"] != token {
			t.Fatalf("%s: token %q, want %v", body, token, m["ClientRequestToken"])
		}
		if got, want := withoutToken(t, stripped), withoutToken(t, body); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: stripped %s", body, stripped)
		}
	})
}

func BenchmarkSplit(b *testing.B) {
	body := []byte(`{"ClientRequestToken":"0b6b7f0e-3d2b-4c55-9a57-7f8f2a0c9d11","TransactItems":[` +
		strings.Repeat(`{"Update":{"TableName":"transfers","Key":{"pk":{"S":"ACCOUNT#acc-000001"},"sk":{"S":"ACCOUNT"}},"UpdateExpression":"SET balance = balance + :amount, updatedAt = :now","ConditionExpression":"attribute_exists(pk) AND currency = :currency","ExpressionAttributeValues":{":amount":{"N":"1250"},":now":{"S":"2026-11-26T21:00:00.123Z"},":currency":{"S":"EUR"}},"ReturnValuesOnConditionCheckFailure":"ALL_OLD"}},`, 4) +
		`{"ConditionCheck":{"TableName":"transfers","Key":{"pk":{"S":"TRANSFER#tr"},"sk":{"S":"LEG#DEBIT"}},"ConditionExpression":"attribute_exists(pk)"}}]}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, ok := split(body); !ok {
			b.Fatal("not split")
		}
	}
}
