package sfnapi_test

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/transferflow/orchestrator/localaws/stepfunctions"
)

// coverageDoc is the document whose "Operation coverage" table lists every operation of the Step Functions API.
const coverageDoc = "../../docs/asl-engine.md"

// coverageRow is one row of the table: the operation, whether the local API supports it, and the tests that call it
// through aws-sdk-go-v2's sfn client.
type coverageRow struct {
	op        string
	supported bool
	tests     []string
}

// TestOperationCoverageTable keeps docs/asl-engine.md's coverage table honest: it lists every operation of the
// API model (the methods of aws-sdk-go-v2's sfn.Client) exactly once; an operation is marked supported exactly
// when the local API dispatches it; and every test a supported row names exists and calls that operation through
// an sfn client.
func TestOperationCoverageTable(t *testing.T) {
	rows := readCoverageTable(t)
	var model []string
	ct := reflect.TypeOf(&sfn.Client{})
	for i := range ct.NumMethod() {
		m := ct.Method(i)
		// An operation is func(c, ctx, *<Op>Input, ...func(*sfn.Options)) (*<Op>Output, error).
		if m.Type.NumIn() == 4 && m.Type.In(2).String() == "*sfn."+m.Name+"Input" {
			model = append(model, m.Name)
		}
	}
	if len(model) < 30 {
		t.Fatalf("found %d operations on sfn.Client; the reflection no longer matches the SDK", len(model))
	}
	var listed []string
	for _, r := range rows {
		listed = append(listed, r.op)
	}
	slices.Sort(listed)
	if !slices.Equal(listed, model) {
		t.Fatalf("the table lists %v\nthe API model has %v", listed, model)
	}

	srv := stepfunctions.RunT(t)
	bodies := testBodies(t)
	for _, r := range rows {
		dispatched := dispatches(t, srv.URL(), r.op)
		if dispatched != r.supported {
			t.Errorf("%s: the table says supported=%v, the local API dispatches it: %v", r.op, r.supported, dispatched)
		}
		if r.supported && len(r.tests) == 0 {
			t.Errorf("%s: supported but the table names no test", r.op)
		}
		for _, name := range r.tests {
			body, ok := bodies[name]
			if !ok {
				t.Errorf("%s: the table names %s, which is not a test of this repository that uses the sfn client", r.op, name)
				continue
			}
			if !strings.Contains(body, "."+r.op+"(") {
				t.Errorf("%s: %s does not call %s", r.op, name, r.op)
			}
		}
	}
}

// readCoverageTable reads the rows under the "### Operation coverage" heading: | `Op` | supported / not supported
// | `TestA`, `TestB` |.
func readCoverageTable(t *testing.T) []coverageRow {
	t.Helper()
	f, err := os.Open(coverageDoc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []coverageRow
	in := false
	sc := bufio.NewScanner(f)
	testName := regexp.MustCompile("`(Test\\w+)`")
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			in = line == "### Operation coverage"
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 5 {
			t.Fatalf("coverage row %q: want | operation | status | tests |", line)
		}
		r := coverageRow{op: strings.Trim(strings.TrimSpace(cells[1]), "`")}
		switch status := strings.TrimSpace(cells[2]); status {
		case "supported":
			r.supported = true
		case "not supported":
		default:
			t.Fatalf("coverage row %s: status %q, want supported or not supported", r.op, status)
		}
		for _, m := range testName.FindAllStringSubmatch(cells[3], -1) {
			r.tests = append(r.tests, m[1])
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("no rows under ### Operation coverage in %s", coverageDoc)
	}
	return rows
}

// dispatches reports whether the local API knows op: anything but UnknownOperationException to an empty request.
func dispatches(t *testing.T, url, op string) bool {
	t.Helper()
	resp := postOp(t, url, op, strings.NewReader("{}"), 2)
	defer resp.Body.Close()
	return resp.Header.Get("X-Amzn-ErrorType") != "UnknownOperationException"
}

// testBodies returns the source of every Test function of the repository's Go test files that use aws-sdk-go-v2's
// sfn client, by name.
func testBodies(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	fn := regexp.MustCompile(`(?ms)^func (Test\w+)\(.*?^}`)
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != "../.." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !strings.Contains(string(b), `"github.com/aws/aws-sdk-go-v2/service/sfn"`) {
			return nil // tests that do not use the SDK's client do not count
		}
		for _, m := range fn.FindAllStringSubmatch(string(b), -1) {
			out[m[1]] = m[0]
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
