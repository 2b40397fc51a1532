package asl_test

import (
	"strings"
	"testing"

	"github.com/transferflow/orchestrator/localaws/asl"
)

// loadProblems loads def and returns the problems Load reports, one string each, and its error.
func loadProblems(def string) ([]string, error) {
	_, err := asl.Load([]byte(def))
	var got []string
	for _, e := range asl.Errors(err) {
		got = append(got, e.Error())
	}
	return got, err
}

// checkProblemPrefixes checks that got holds as many problems as want and that each of want begins one of them.
func checkProblemPrefixes(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%s\nwant:\n%s", len(got), len(want), strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || strings.HasPrefix(g, w)
		}
		if !found {
			t.Errorf("missing %q in:\n%s", w, strings.Join(got, "\n"))
		}
	}
}
