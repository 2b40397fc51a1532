package deploy

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ruleValue evaluates v, a value of a template's Rules section, with the parameter values params (the others
// keep their defaults): the rule functions this template uses (Fn::Equals, Fn::Not, Fn::And, Fn::Or, Ref to a
// parameter) and literals. Anything else fails the test.
func ruleValue(t *testing.T, tmpl *Template, v any, params map[string]string) any {
	t.Helper()
	switch v := v.(type) {
	case string, bool:
		return v
	case map[string]any:
		if len(v) != 1 {
			t.Fatalf("rule value %v: want one function", v)
		}
		for fn, arg := range v {
			if fn == "Ref" {
				name, _ := arg.(string)
				if val, ok := params[name]; ok {
					return val
				}
				p, ok := tmpl.Parameters[name]
				if !ok {
					t.Fatalf("rule: Ref %s is not a parameter", name)
				}
				return fmt.Sprint(p["Default"])
			}
			args, _ := arg.([]any)
			vals := make([]any, len(args))
			for i, a := range args {
				vals[i] = ruleValue(t, tmpl, a, params)
			}
			switch fn {
			case "Fn::Equals":
				if len(vals) == 2 {
					return vals[0] == vals[1]
				}
			case "Fn::Not":
				if b, ok := vals[0].(bool); ok && len(vals) == 1 {
					return !b
				}
			case "Fn::And", "Fn::Or":
				all, some := true, false
				for _, x := range vals {
					b, _ := x.(bool)
					all, some = all && b, some || b
				}
				if fn == "Fn::And" {
					return all
				}
				return some
			}
			t.Fatalf("rule value %v: not evaluated by this test", v)
		}
	}
	t.Fatalf("rule value %#v: not evaluated by this test", v)
	return nil
}

// refusals returns the AssertDescription of every assertion of tmpl's Rules that fails with params, as
// CloudFormation refuses a change set: a rule applies when its RuleCondition holds (or it has none).
func refusals(t *testing.T, tmpl *Template, params map[string]string) []string {
	t.Helper()
	var out []string
	for _, name := range slices.Sorted(maps.Keys(tmpl.Rules)) {
		rule, _ := tmpl.Rules[name].(map[string]any)
		if c, ok := rule["RuleCondition"]; ok && ruleValue(t, tmpl, c, params) != true {
			continue
		}
		asserts, _ := rule["Assertions"].([]any)
		if len(asserts) == 0 {
			t.Errorf("rule %s has no assertions", name)
		}
		for _, a := range asserts {
			am, _ := a.(map[string]any)
			if ruleValue(t, tmpl, am["Assert"], params) != true {
				out = append(out, fmt.Sprintf("%s: %v", name, am["AssertDescription"]))
			}
		}
	}
	return out
}

// TestProdNeedsAlarmEmail: CloudFormation refuses to create or update a prod stack whose alarms would notify nobody.
func TestProdNeedsAlarmEmail(t *testing.T) {
	tmpl := TransformT(t)
	if got := stringList(tmpl.Parameters["Environment"]["AllowedValues"]); !slices.Equal(got, []string{"dev", "prod"}) {
		t.Errorf("parameter Environment allows %v, want dev and prod", got)
	}
	tests := []struct {
		name    string
		params  map[string]string
		refused bool
	}{
		{"prod without AlarmEmail", map[string]string{"Environment": "prod"}, true},
		{"prod with an empty AlarmEmail", map[string]string{"Environment": "prod", "AlarmEmail": ""}, true},
		{"prod with AlarmEmail", map[string]string{"Environment": "prod", "AlarmEmail": "oncall@example.com"}, false},
		{"the defaults", map[string]string{}, false},
		{"dev without AlarmEmail", map[string]string{"Environment": "dev"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := refusals(t, tmpl, tt.params)
			if (len(got) > 0) != tt.refused {
				t.Errorf("refusals %v, want refused=%v", got, tt.refused)
			}
		})
	}
}

// samconfig reads the repository's samconfig.toml: its tables ("prod.deploy.parameters") and their keys' string
// values. It reads the subset of TOML the file uses (tables, key = "basic string", comments, version = 0.1).
func samconfig(t *testing.T) map[string]map[string]string {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, "samconfig.toml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]map[string]string{}
	table := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			table = strings.Trim(line, "[]")
			out[table] = map[string]string{}
		default:
			key, val, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("samconfig.toml:%d: %q", n, line)
			}
			key, val = strings.TrimSpace(key), strings.TrimSpace(val)
			if s, err := strconv.Unquote(val); err == nil {
				val = s
			}
			if table != "" {
				out[table][key] = val
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSamconfigEnvironments: both environments deploy to a pinned region, say which environment they are, leave the
// account-wide API Gateway logging role alone, hold nothing secret (AlarmEmail is passed on the command line), and
// override only parameters the template has, with values it allows.
func TestSamconfigEnvironments(t *testing.T) {
	tmpl := TransformT(t)
	cfg := samconfig(t)
	for env, want := range map[string]string{"default": "dev", "prod": "prod"} {
		deploy, ok := cfg[env+".deploy.parameters"]
		if !ok {
			t.Errorf("samconfig.toml has no [%s.deploy.parameters]", env)
			continue
		}
		if deploy["region"] == "" {
			t.Errorf("[%s.deploy.parameters]: no region", env)
		}
		overrides := map[string]string{}
		for _, kv := range strings.Fields(deploy["parameter_overrides"]) {
			k, v, _ := strings.Cut(kv, "=")
			overrides[k] = v
			p, ok := tmpl.Parameters[k]
			if !ok {
				t.Errorf("[%s.deploy.parameters]: %s is not a parameter of the template", env, k)
				continue
			}
			if allowed := stringList(p["AllowedValues"]); allowed != nil && !slices.Contains(allowed, v) {
				t.Errorf("[%s.deploy.parameters]: %s=%s, not one of %v", env, k, v, allowed)
			}
		}
		if overrides["Environment"] != want {
			t.Errorf("[%s.deploy.parameters]: Environment=%q, want %s", env, overrides["Environment"], want)
		}
		if v, ok := overrides["CreateApiGatewayLoggingRole"]; ok && v != "false" {
			t.Errorf("[%s.deploy.parameters]: CreateApiGatewayLoggingRole=%s: the account setting is opt-in, per "+
				"account and region, not per environment (docs/deploy.md)", env, v)
		}
		if _, ok := overrides["AlarmEmail"]; ok {
			t.Errorf("[%s.deploy.parameters]: sets AlarmEmail, which is passed on the command line (docs/deploy.md)", env)
		}
	}
}

// TestSamBuildIsStatic: `make sam-build` builds the functions with cgo off, as make test checks them, whatever the
// machine's C toolchain.
func TestSamBuildIsStatic(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\nsam-build:")
	if !ok {
		t.Fatal("Makefile has no sam-build target")
	}
	recipe, _, _ := strings.Cut(rest, "\n\n")
	if !strings.Contains(recipe, "CGO_ENABLED=0 ") || !strings.Contains(recipe, "$(SAM) build") {
		t.Errorf("sam-build recipe %q: want CGO_ENABLED=0 on its sam build", recipe)
	}
}
