package deploy

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// privilegeRoles are the rows of docs/deploy.md's least-privilege table, by the role each describes.
var privilegeRoles = map[string]string{
	"orchestrator":       "OrchestratorRole",
	"debit":              "DebitRole",
	"credit":             "CreditRole",
	"timeout-reconciler": "TimeoutReconcilerRole",
	"outcome-relay":      "OutcomeRelayRole",
	"workflow":           "TransferStateMachineRole",
}

// tableGrants is what a role allows, as the least-privilege table says it: item actions as "PREFIX#* Action", a
// Query on an index as "Query on NAME", and every other action but logging's and tracing's by its full name.
type tableGrants map[string]bool

// TestLeastPrivilegeTableIsTheTemplates: docs/deploy.md's table of what each role tableGrants says what the template's
// roles allow, no more and no less: on the table's items by partition key prefix, a Query on an index, and every
// other action but CloudWatch Logs' and X-Ray's. Every role of a function or of the workflow has its row.
func TestLeastPrivilegeTableIsTheTemplates(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := privilegeTable(t, string(doc))

	template := map[string]tableGrants{}
	for _, st := range TransformT(t).RoleStatements() {
		if st.Effect != "Allow" {
			continue
		}
		g := template[st.Role]
		if g == nil {
			g = tableGrants{}
			template[st.Role] = g
		}
		for _, action := range st.Action {
			service, name, _ := strings.Cut(action, ":")
			switch {
			case service == "logs" || service == "xray":
			case service == "dynamodb" && st.LeadingKeys != nil:
				for _, prefix := range st.LeadingKeys {
					g[prefix+" "+name] = true
				}
			case action == "dynamodb:Query":
				for _, r := range st.Resource {
					if _, index, ok := strings.Cut(r, "/index/"); ok {
						g["Query on "+index] = true
					} else {
						g[action+" on "+r] = true // not in the table: a Query of the whole table would show as a difference
					}
				}
			default:
				g[action] = true
			}
		}
	}

	for label, role := range privilegeRoles {
		row, ok := rows[label]
		if !ok {
			t.Errorf("docs/deploy.md's least-privilege table has no row %q (%s)", label, role)
			continue
		}
		want := template[role]
		if missing, extra := diff(want, row); len(missing)+len(extra) > 0 {
			t.Errorf("row %q: the template's %s also allows %v; the row names %v, which it does not allow", label, role, missing, extra)
		}
	}
	for role := range template {
		if role != "ApiGatewayLoggingRole" && !slices.Contains(slices.Collect(maps.Values(privilegeRoles)), role) {
			t.Errorf("role %s has no row in docs/deploy.md's least-privilege table", role)
		}
	}
	for label := range rows {
		if _, ok := privilegeRoles[label]; !ok {
			t.Errorf("docs/deploy.md's least-privilege table has a row %q for no role", label)
		}
	}
}

// privilegeTable reads the least-privilege table of deploy.md: | role | items by prefix | indexes | other |.
func privilegeTable(t *testing.T, doc string) map[string]tableGrants {
	t.Helper()
	const header = "| role | DynamoDB: the table's items, by partition key (`dynamodb:LeadingKeys`) | DynamoDB: indexes | other |"
	_, table, ok := strings.Cut(doc, header+"\n| --- | --- | --- | --- |\n")
	if !ok {
		t.Fatalf("docs/deploy.md has no table headed %s", header)
	}
	table, _, _ = strings.Cut(table, "\n\n")
	item := regexp.MustCompile("^`([A-Z]+#\\*)`: (.*)$")
	comment := regexp.MustCompile(` \([^)]*\)`)
	action := regexp.MustCompile("`([a-z0-9-]+:[A-Za-z]+)`")
	rows := map[string]tableGrants{}
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) != 4 {
			t.Fatalf("least-privilege row %q: want 4 cells", line)
		}
		g := tableGrants{}
		for _, part := range strings.Split(comment.ReplaceAllString(cells[1], ""), "; ") {
			if part == "" {
				continue
			}
			m := item.FindStringSubmatch(part)
			if m == nil {
				t.Fatalf("least-privilege row %q: %q is not `PREFIX#*`: Action, …", cells[0], part)
			}
			for _, name := range strings.Split(m[2], ", ") {
				g[m[1]+" "+name] = true
			}
		}
		if index, ok := strings.CutPrefix(cells[2], "Query on `"); ok && strings.HasSuffix(index, "`") {
			g["Query on "+strings.TrimSuffix(index, "`")] = true
		} else if cells[2] != "" {
			t.Fatalf("least-privilege row %q: indexes %q, want Query on `Index`, or nothing", cells[0], cells[2])
		}
		for _, m := range action.FindAllStringSubmatch(cells[3], -1) {
			g[m[1]] = true
		}
		rows[cells[0]] = g
	}
	return rows
}

// diff returns the keys only in want and the keys only in got, sorted.
func diff(want, got tableGrants) (missing, extra []string) {
	for k := range want {
		if !got[k] {
			missing = append(missing, k)
		}
	}
	for k := range got {
		if !want[k] {
			extra = append(extra, k)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	return missing, extra
}
