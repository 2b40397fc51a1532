package transfer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dunglas/httpsfv"
)

// Limits of the POST /transfers contract (docs/api.md).
const (
	MaxBodyBytes     = 16 << 10
	MaxAmount        = 100_000_000_000
	MaxReferenceLen  = 140
	maxKeyLen        = 255
	maxAccountIDLen  = 64
	fieldSource      = "sourceAccountId"
	fieldDestination = "destinationAccountId"
	fieldAmount      = "amount"
	fieldCurrency    = "currency"
	fieldReference   = "reference"
)

var (
	// ErrKeyMissing reports a request without an Idempotency-Key header.
	ErrKeyMissing = errors.New("transfer: Idempotency-Key header is required")
	accountIDRe   = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	currencyRe    = regexp.MustCompile(`^[A-Z]{3}$`)
	integerRe     = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)
)

// KeyError reports a malformed Idempotency-Key.
type KeyError struct{ Reason string }

func (e *KeyError) Error() string { return "invalid Idempotency-Key: " + e.Reason }

// ParseIdempotencyKey accepts the header in its IETF structured-field form (an sf-string, "abc") or as a bare token,
// and returns the key: 1 to 255 printable ASCII characters (0x21-0x7E). values are all the header's values.
func ParseIdempotencyKey(values []string) (string, error) {
	switch len(values) {
	case 0:
		return "", ErrKeyMissing
	case 1:
	default:
		return "", &KeyError{Reason: "the header appears more than once"}
	}
	raw := strings.Trim(values[0], " \t")
	if raw == "" {
		return "", ErrKeyMissing
	}
	key := raw
	if strings.HasPrefix(raw, `"`) {
		item, err := httpsfv.UnmarshalItem([]string{raw})
		if err != nil {
			return "", &KeyError{Reason: "not a valid structured-field string"}
		}
		s, ok := item.Value.(string)
		if !ok || len(item.Params.Names()) > 0 {
			return "", &KeyError{Reason: "must be a string without parameters"}
		}
		key = s
	}
	if len(key) == 0 || len(key) > maxKeyLen {
		return "", &KeyError{Reason: fmt.Sprintf("must be 1 to %d characters", maxKeyLen)}
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return "", &KeyError{Reason: "only printable ASCII characters (0x21-0x7E) are allowed"}
		}
	}
	return key, nil
}

// Request is a validated POST /transfers body. Amount is in minor units of Currency.
type Request struct {
	SourceAccountID      string
	DestinationAccountID string
	Amount               int64
	Currency             string
	Reference            string
}

// FieldError names one invalid field of a request body.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// ValidationError lists every problem found in a request body.
type ValidationError struct{ Errors []FieldError }

func (e *ValidationError) Error() string {
	msgs := make([]string, len(e.Errors))
	for i, f := range e.Errors {
		msgs[i] = f.Field + ": " + f.Message
	}
	return "invalid transfer request: " + strings.Join(msgs, "; ")
}

func (e *ValidationError) add(field, msg string) { e.Errors = append(e.Errors, FieldError{field, msg}) }

// DecodeRequest parses and validates a request body strictly: a single JSON object, no unknown or repeated fields,
// amount a JSON integer. Every problem is reported in one *ValidationError.
func DecodeRequest(body []byte) (Request, error) {
	verr := &ValidationError{}
	fields, err := decodeObject(body)
	if err != nil {
		verr.add("body", err.Error())
		return Request{}, verr
	}
	var r Request
	// Unknown fields are reported in sorted order: the same body always gets the same errors, in the same order.
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		switch name {
		case fieldSource, fieldDestination, fieldAmount, fieldCurrency, fieldReference:
		default:
			verr.add(name, "unknown field")
		}
	}
	r.SourceAccountID = patternField(fields, fieldSource, verr)
	r.DestinationAccountID = patternField(fields, fieldDestination, verr)
	if r.SourceAccountID != "" && r.SourceAccountID == r.DestinationAccountID {
		verr.add(fieldDestination, "must differ from sourceAccountId")
	}
	r.Amount = amountField(fields, verr)
	r.Currency = patternField(fields, fieldCurrency, verr)
	r.Reference = stringField(fields, fieldReference, false, verr)
	if n := utf8.RuneCountInString(r.Reference); n > MaxReferenceLen {
		verr.add(fieldReference, fmt.Sprintf("must be at most %d characters", MaxReferenceLen))
	}
	if strings.ContainsFunc(r.Reference, forgesLines) {
		verr.add(fieldReference, "must not contain control, line separator or bidirectional control characters")
	}
	if len(verr.Errors) > 0 {
		return Request{}, verr
	}
	return r, nil
}

// forgesLines reports whether c could forge or disguise a line where a reference is shown (a statement, a log viewer):
// a control character (C0, DEL or C1, NEL included), a line or paragraph separator (U+2028, U+2029), or a character of
// Unicode's Bidi_Control property (the embeddings, overrides and isolates U+202A–U+202E and U+2066–U+2069, and the
// marks U+061C, U+200E and U+200F), which reorder the text around them on display.
func forgesLines(c rune) bool {
	return unicode.IsControl(c) || unicode.In(c, unicode.Zl, unicode.Zp, unicode.Bidi_Control)
}

// decodeObject reads exactly one JSON object and returns its members undecoded, rejecting repeated names.
func decodeObject(body []byte) (map[string]json.RawMessage, error) {
	if !utf8.Valid(body) {
		return nil, errors.New("must be UTF-8 encoded JSON")
	}
	if hasLoneSurrogate(body) {
		return nil, errors.New(`must not contain an unpaired UTF-16 surrogate escape (\uD800 to \uDFFF)`)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, errors.New("must be a JSON object")
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("must be a JSON object")
	}
	fields := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, errors.New("malformed JSON")
		}
		name := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, errors.New("malformed JSON")
		}
		if _, dup := fields[name]; dup {
			return nil, fmt.Errorf("field %q appears more than once", name)
		}
		fields[name] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, errors.New("malformed JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON object")
	}
	return fields, nil
}

// hasLoneSurrogate reports whether JSON text b has a \u escape of a UTF-16 surrogate that is not one half of a
// high-low pair. Go's decoder would turn each into U+FFFD, so two different payloads would parse, and hash, the same:
// such a body is refused, never normalised. A backslash occurs in valid JSON only inside strings, so the scan needs no
// other JSON state.
func hasLoneSurrogate(b []byte) bool {
	// escapeAt returns the code unit of a \uXXXX escape at b[i:], or -1.
	escapeAt := func(i int) int {
		if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
			return -1
		}
		r, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 16)
		if err != nil {
			return -1
		}
		return int(r)
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		r := escapeAt(i)
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if low := escapeAt(i + 6); low < 0xDC00 || low > 0xDFFF {
				return true
			}
			i += 11 // the pair
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		case r >= 0:
			i += 5
		default:
			i++ // a two-character escape such as \" or \\
		}
	}
	return false
}

// patternField reads a required string field that must match its pattern: an account id (sourceAccountId,
// destinationAccountId, accountId) or a currency. A value that does not match is reported with what it must be.
func patternField(fields map[string]json.RawMessage, name string, verr *ValidationError) string {
	v := stringField(fields, name, true, verr)
	re, want := accountIDRe, "must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -"
	if name == fieldCurrency {
		re, want = currencyRe, "must be three upper-case letters (ISO 4217)"
	}
	if v != "" && !re.MatchString(v) {
		verr.add(name, want)
	}
	return v
}

func stringField(fields map[string]json.RawMessage, name string, required bool, verr *ValidationError) string {
	raw, ok := fields[name]
	if !ok {
		if required {
			verr.add(name, "is required")
		}
		return ""
	}
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		verr.add(name, "must be a string")
		return ""
	}
	if required && s == "" {
		verr.add(name, "must not be empty")
	}
	return s
}

func amountField(fields map[string]json.RawMessage, verr *ValidationError) int64 {
	raw, ok := fields[fieldAmount]
	if !ok {
		verr.add(fieldAmount, "is required")
		return 0
	}
	s := string(raw)
	if !integerRe.MatchString(s) {
		verr.add(fieldAmount, "must be a JSON integer in minor units (no fraction, exponent or quotes)")
		return 0
	}
	if len(s) > 12 || s[0] == '-' || s == "0" {
		verr.add(fieldAmount, fmt.Sprintf("must be between 1 and %d", int64(MaxAmount)))
		return 0
	}
	var n int64
	fmt.Sscan(s, &n)
	if n < 1 || n > MaxAmount {
		verr.add(fieldAmount, fmt.Sprintf("must be between 1 and %d", int64(MaxAmount)))
		return 0
	}
	return n
}

// canonicalRequest fixes field order so that equal requests hash equally, whatever the client's key order or spacing.
type canonicalRequest struct {
	SourceAccountID      string `json:"sourceAccountId"`
	DestinationAccountID string `json:"destinationAccountId"`
	Amount               int64  `json:"amount"`
	Currency             string `json:"currency"`
	Reference            string `json:"reference"`
}

// Hash is the SHA-256 (hex) of the canonical form of r: what "same payload" means for an Idempotency-Key.
func (r Request) Hash() string {
	b, _ := json.Marshal(canonicalRequest(r))
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
