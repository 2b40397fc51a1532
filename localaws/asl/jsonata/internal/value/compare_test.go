package value

import "testing"

// TestCompareStrings: JavaScript's string order (UTF-16 code units), including characters that share their first
// UTF-8 byte and characters above U+FFFF, which sort before U+E000–U+FFFF.
func TestCompareStrings(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"a", "b", -1}, {"b", "a", 1}, {"a", "a", 0}, {"a", "ab", -1}, {"", "a", -1},
		{"é", "ê", -1}, {"ê", "é", 1}, {"xé", "xê", -1}, {"Z", "é", -1},
		{"\uFFFF", "😀", 1}, {"😀", "\uE000", -1}, {"😀", "😁", -1}, {"😀", "\uD7FF", 1},
	}
	for _, tc := range tests {
		if got := CompareStrings(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareStrings(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
