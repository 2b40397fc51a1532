package transfer

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseIdempotencyKey(t *testing.T) {
	tests := []struct {
		name    string
		values  []string
		want    string
		wantErr string // "missing", "invalid" or ""
	}{
		{name: "bare token", values: []string{"order-118"}, want: "order-118"},
		{name: "structured-field string", values: []string{`"order-118"`}, want: "order-118"},
		{name: "sf-string with escaped quote", values: []string{`"a\"b"`}, want: `a"b`},
		{name: "surrounding spaces are trimmed", values: []string{"  abc \t"}, want: "abc"},
		{name: "255 characters", values: []string{strings.Repeat("k", 255)}, want: strings.Repeat("k", 255)},
		{name: "no header", values: nil, wantErr: "missing"},
		{name: "empty header", values: []string{"   "}, wantErr: "missing"},
		{name: "empty sf-string", values: []string{`""`}, wantErr: "invalid"},
		{name: "256 characters", values: []string{strings.Repeat("k", 256)}, wantErr: "invalid"},
		{name: "space inside bare token", values: []string{"a b"}, wantErr: "invalid"},
		{name: "space inside sf-string", values: []string{`"a b"`}, wantErr: "invalid"},
		{name: "non-ASCII", values: []string{"clé"}, wantErr: "invalid"},
		{name: "control character", values: []string{"a\x01b"}, wantErr: "invalid"},
		{name: "unterminated sf-string", values: []string{`"abc`}, wantErr: "invalid"},
		{name: "sf-string with parameters", values: []string{`"abc";p=1`}, wantErr: "invalid"},
		{name: "header repeated", values: []string{"a", "b"}, wantErr: "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseIdempotencyKey(tt.values)
			var kerr *KeyError
			switch tt.wantErr {
			case "missing":
				if !errors.Is(err, ErrKeyMissing) {
					t.Fatalf("err = %v, want ErrKeyMissing", err)
				}
			case "invalid":
				if !errors.As(err, &kerr) {
					t.Fatalf("err = %v, want *KeyError", err)
				}
			default:
				if err != nil || got != tt.want {
					t.Fatalf("got %q, %v; want %q", got, err, tt.want)
				}
			}
		})
	}
}

func TestDecodeRequest(t *testing.T) {
	valid := Request{SourceAccountID: "acc-alice", DestinationAccountID: "acc-bob", Amount: 1250, Currency: "EUR", Reference: "invoice 2026-118"}
	tests := []struct {
		name       string
		body       string
		want       Request
		wantFields []string // fields named in the ValidationError, in order
	}{
		{name: "valid", body: `{"sourceAccountId":"acc-alice","destinationAccountId":"acc-bob","amount":1250,"currency":"EUR","reference":"invoice 2026-118"}`, want: valid},
		{name: "reference optional", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"USD"}`,
			want: Request{SourceAccountID: "a", DestinationAccountID: "b", Amount: 1, Currency: "USD"}},
		{name: "maximum amount", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":100000000000,"currency":"USD"}`,
			want: Request{SourceAccountID: "a", DestinationAccountID: "b", Amount: 100000000000, Currency: "USD"}},
		{name: "not JSON", body: `amount=5`, wantFields: []string{"body"}},
		{name: "array", body: `[]`, wantFields: []string{"body"}},
		{name: "trailing data", body: `{"amount":1}{}`, wantFields: []string{"body"}},
		{name: "repeated field", body: `{"sourceAccountId":"a","sourceAccountId":"c","destinationAccountId":"b","amount":1,"currency":"USD"}`, wantFields: []string{"body"}},
		{name: "invalid UTF-8", body: "{\"reference\":\"\xff\"}", wantFields: []string{"body"}},
		// Unpaired surrogate escapes would all decode to U+FFFD, so different payloads would share a fingerprint.
		{name: "lone high surrogate", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"USD","reference":"x\ud800"}`, wantFields: []string{"body"}},
		{name: "lone low surrogate", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"USD","reference":"\uDC00x"}`, wantFields: []string{"body"}},
		{name: "surrogates in the wrong order", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"USD","reference":"\udc00\ud800"}`, wantFields: []string{"body"}},
		{name: "high surrogate before a non-surrogate escape", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"USD","reference":"\ud83d\u0041"}`, wantFields: []string{"body"}},
		{name: "lone surrogate in a member name", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"USD","\ud800":"x"}`, wantFields: []string{"body"}},
		{name: "surrogate pair", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"USD","reference":"\ud83d\ude00 ok"}`,
			want: Request{SourceAccountID: "a", DestinationAccountID: "b", Amount: 1, Currency: "USD", Reference: "😀 ok"}},
		{name: "an escaped backslash before u is text", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"USD","reference":"\\ud800"}`,
			want: Request{SourceAccountID: "a", DestinationAccountID: "b", Amount: 1, Currency: "USD", Reference: `\ud800`}},
		{name: "empty object names every required field", body: `{}`,
			wantFields: []string{"sourceAccountId", "destinationAccountId", "amount", "currency"}},
		{name: "unknown field", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"USD","fee":3}`, wantFields: []string{"fee"}},
		{name: "float amount", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":12.5,"currency":"USD"}`, wantFields: []string{"amount"}},
		{name: "integral float amount", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":12.0,"currency":"USD"}`, wantFields: []string{"amount"}},
		{name: "exponent amount", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1e3,"currency":"USD"}`, wantFields: []string{"amount"}},
		{name: "string amount", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":"10","currency":"USD"}`, wantFields: []string{"amount"}},
		{name: "zero amount", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":0,"currency":"USD"}`, wantFields: []string{"amount"}},
		{name: "negative amount", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":-5,"currency":"USD"}`, wantFields: []string{"amount"}},
		{name: "amount over 10^11", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":100000000001,"currency":"USD"}`, wantFields: []string{"amount"}},
		{name: "huge amount", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":99999999999999999999999,"currency":"USD"}`, wantFields: []string{"amount"}},
		{name: "lower-case currency", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"eur"}`, wantFields: []string{"currency"}},
		{name: "same accounts", body: `{"sourceAccountId":"a","destinationAccountId":"a","amount":1,"currency":"USD"}`, wantFields: []string{"destinationAccountId"}},
		{name: "bad account characters", body: `{"sourceAccountId":"a/b","destinationAccountId":"b","amount":1,"currency":"USD"}`, wantFields: []string{"sourceAccountId"}},
		{name: "account id too long", body: `{"sourceAccountId":"` + strings.Repeat("a", 65) + `","destinationAccountId":"b","amount":1,"currency":"USD"}`, wantFields: []string{"sourceAccountId"}},
		{name: "null account", body: `{"sourceAccountId":null,"destinationAccountId":"b","amount":1,"currency":"USD"}`, wantFields: []string{"sourceAccountId"}},
		{name: "reference too long", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"USD","reference":"` + strings.Repeat("é", 141) + `"}`, wantFields: []string{"reference"}},
		{name: "reference with newline", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"USD","reference":"a\nb"}`, wantFields: []string{"reference"}},
		// Characters that break a line or reorder text on display forge statement lines as control characters do.
		{name: "reference with next line (NEL, C1)", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"USD","reference":"a\u0085b"}`, wantFields: []string{"reference"}},
		{name: "reference with C1 control", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"USD","reference":"a\u009bb"}`, wantFields: []string{"reference"}},
		{name: "reference with line separator", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"USD","reference":"a\u2028b"}`, wantFields: []string{"reference"}},
		{name: "reference with paragraph separator", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"USD","reference":"a\u2029b"}`, wantFields: []string{"reference"}},
		{name: "reference with left-to-right embedding", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"USD","reference":"a\u202ab"}`, wantFields: []string{"reference"}},
		{name: "reference with right-to-left override", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"USD","reference":"a\u202eb"}`, wantFields: []string{"reference"}},
		{name: "reference with pop directional formatting", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"USD","reference":"a\u202cb"}`, wantFields: []string{"reference"}},
		{name: "reference with left-to-right isolate", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"USD","reference":"a\u2066b"}`, wantFields: []string{"reference"}},
		{name: "reference with pop directional isolate", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"USD","reference":"a\u2069b"}`, wantFields: []string{"reference"}},
		{name: "reference with left-to-right mark", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"USD","reference":"a\u200eb"}`, wantFields: []string{"reference"}},
		{name: "reference with right-to-left mark", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"USD","reference":"a\u200fb"}`, wantFields: []string{"reference"}},
		{name: "reference with Arabic letter mark", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"USD","reference":"a\u061cb"}`, wantFields: []string{"reference"}},
		{name: "reference in Hebrew and Latin", body: `{"sourceAccountId":"a","destinationAccountId":"b","amount":1,"currency":"USD","reference":"\u05d7\u05e9\u05d1\u05d5\u05df 118 caf\u00e9"}`,
			want: Request{SourceAccountID: "a", DestinationAccountID: "b", Amount: 1, Currency: "USD", Reference: "חשבון 118 café"}},
		{name: "several bad fields", body: `{"sourceAccountId":"","destinationAccountId":"b","amount":1.5,"currency":"usd"}`,
			wantFields: []string{"sourceAccountId", "amount", "currency"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeRequest([]byte(tt.body))
			if tt.wantFields == nil {
				if err != nil || got != tt.want {
					t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
				}
				return
			}
			var verr *ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("err = %v, want *ValidationError", err)
			}
			var fields []string
			for _, f := range verr.Errors {
				fields = append(fields, f.Field)
			}
			if !reflect.DeepEqual(fields, tt.wantFields) {
				t.Fatalf("fields = %v, want %v (%v)", fields, tt.wantFields, verr)
			}
		})
	}
}

func TestRequestHashIgnoresKeyOrderAndSpacing(t *testing.T) {
	a, err := DecodeRequest([]byte(`{"sourceAccountId":"a","destinationAccountId":"b","amount":10,"currency":"USD","reference":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := DecodeRequest([]byte("{ \"reference\" : \"x\",\n \"currency\":\"USD\", \"amount\": 10, \"destinationAccountId\":\"b\", \"sourceAccountId\":\"a\" }"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Hash() != b.Hash() {
		t.Errorf("hashes differ for the same canonical request")
	}
	c := a
	c.Amount = 11
	if a.Hash() == c.Hash() {
		t.Errorf("hash unchanged when the amount changed")
	}
}

func TestLoadConfig(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	base := map[string]string{"TABLE_NAME": "t", "STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:Transfer"}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for kk, vv := range base {
			m[kk] = vv
		}
		m[k] = v
		return m
	}
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string
	}{
		{name: "defaults", env: base},
		{name: "ttl forever", env: with("IDEMPOTENCY_TTL", "0")},
		{name: "missing table", env: with("TABLE_NAME", ""), wantErr: "TABLE_NAME is required"},
		{name: "bad arn", env: with("STATE_MACHINE_ARN", "Transfer"), wantErr: "STATE_MACHINE_ARN"},
		{name: "alias arn", env: with("STATE_MACHINE_ARN", "arn:aws:states:us-east-1:123456789012:stateMachine:Transfer:live")},
		{name: "version arn", env: with("STATE_MACHINE_ARN", "arn:aws:states:us-east-1:123456789012:stateMachine:Transfer:7")},
		{name: "empty qualifier", env: with("STATE_MACHINE_ARN", "arn:aws:states:us-east-1:123456789012:stateMachine:Transfer:"), wantErr: "STATE_MACHINE_ARN"},
		{name: "short ttl", env: with("IDEMPOTENCY_TTL", "1h"), wantErr: "IDEMPOTENCY_TTL"},
		{name: "bad ttl", env: with("IDEMPOTENCY_TTL", "week"), wantErr: "IDEMPOTENCY_TTL"},
		{name: "window too short", env: with("RESERVATION_WINDOW", "1s"), wantErr: "RESERVATION_WINDOW"},
		{name: "key secret", env: with("IDEMPOTENCY_KEY_SECRET", strings.Repeat("s", 32))},
		{name: "short key secret", env: with("IDEMPOTENCY_KEY_SECRET", "hunter2-is-too-short"), wantErr: "IDEMPOTENCY_KEY_SECRET must be at least 32 bytes, not 20"},
		{name: "unresolved key secret", env: with("IDEMPOTENCY_KEY_SECRET", "{{resolve:secretsmanager:IdempotencyKeySecret:SecretString}}"), wantErr: "unresolved dynamic reference"},
		{name: "legacy keys without a secret", env: with("LEGACY_KEY_HASH_UNTIL", "2026-12-01T00:00:00Z"), wantErr: "LEGACY_KEY_HASH_UNTIL needs IDEMPOTENCY_KEY_SECRET"},
		{name: "legacy keys not a time", env: with("LEGACY_KEY_HASH_UNTIL", "next week"), wantErr: "LEGACY_KEY_HASH_UNTIL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := LoadConfig(env(tt.env))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.ReservationWindow != defaultReservationWindow {
					t.Errorf("window = %s", c.ReservationWindow)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to name %s", err, tt.wantErr)
			}
			if secret := tt.env["IDEMPOTENCY_KEY_SECRET"]; secret != "" && strings.Contains(err.Error(), secret) {
				t.Errorf("err = %v quotes the secret", err)
			}
		})
	}
}

// TestLoadReconcilerConfigWantsTheStateMachine: the reconciler matches status-change events by the state machine's
// own ARN, which an execution started through an alias still carries, so an alias ARN there is a mistake.
func TestLoadReconcilerConfigWantsTheStateMachine(t *testing.T) {
	env := map[string]string{"TABLE_NAME": "t", "EVENT_BUS_NAME": "b",
		"STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:Transfer"}
	if _, err := LoadReconcilerConfig(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	env["STATE_MACHINE_ARN"] += ":live"
	if _, err := LoadReconcilerConfig(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "STATE_MACHINE_ARN") {
		t.Errorf("alias ARN: err = %v, want STATE_MACHINE_ARN refused", err)
	}
}

// TestExecutionArnOfAQualifiedStart: an execution started through an alias or a version has the state machine's
// execution ARN, which the transfer record keeps and the history and the reconciler look up.
func TestExecutionArnOfAQualifiedStart(t *testing.T) {
	const want = "arn:aws:states:us-east-1:123456789012:execution:Transfer:tr_1"
	for _, sm := range []string{
		"arn:aws:states:us-east-1:123456789012:stateMachine:Transfer",
		"arn:aws:states:us-east-1:123456789012:stateMachine:Transfer:live",
		"arn:aws:states:us-east-1:123456789012:stateMachine:Transfer:12",
	} {
		if got := ExecutionArn(sm, "tr_1"); got != want {
			t.Errorf("ExecutionArn(%s) = %s, want %s", sm, got, want)
		}
	}
}
