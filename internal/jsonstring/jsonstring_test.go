package jsonstring_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/transferflow/orchestrator/internal/jsonstring"
)

// TestAppendWritesAsEncodingJSON: each string is written byte for byte as encoding/json writes it without HTML
// escaping, after what b already held.
func TestAppendWritesAsEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " backslash \ slash /`, "tab\t newline\n cr\r bs\b ff\f nul\x00 us\x1f",
		"é ü 日本 🙂", "bad \xff utf-8 \xe2\x82", "<html>&amp;", "\u2028\u2029", "\x7f"} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got := string(jsonstring.Append([]byte("x"), s)); got != "x"+string(bytes.TrimSuffix(want.Bytes(), []byte("\n"))) {
			t.Errorf("Append(%q) = %s, want x%s", s, got, want.Bytes())
		}
	}
}
