package deploy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/transferflow/orchestrator/internal/syncio"
	"github.com/transferflow/orchestrator/localaws/samtemplate"
)

// ErrNoTranslator means the repository's .venv, or aws-sam-translator in it, is missing; `make test` installs both.
var ErrNoTranslator = errors.New("deploy: aws-sam-translator not installed in .venv (`make test` installs it)")

// exitNoTranslator is the exit status of tools/sam_transform.py when it cannot import aws-sam-translator.
const exitNoTranslator = 3

// region is where the transform runs. ARNs in the output use ${AWS::Region}; the partition the translator writes
// literally (arn:aws:...) follows from it.
const region = "us-east-1"

// Template is a CloudFormation template as the SAM transform leaves it: no AWS::Serverless::* resources, only the
// CloudFormation resources SAM generates for them and the template's own.
type Template struct {
	Parameters map[string]map[string]any `json:"Parameters"`
	// Conditions are the template's conditions, as decoded from JSON ({"Fn::Not": […]}).
	Conditions map[string]any `json:"Conditions"`
	// Rules are the template's parameter rules (each a RuleCondition and Assertions), as decoded from JSON.
	Rules     map[string]any      `json:"Rules"`
	Resources map[string]Resource `json:"Resources"`
	Outputs   map[string]Output   `json:"Outputs"`
}

// Output is one entry of a template's Outputs.
type Output struct {
	Description string `json:"Description"`
	Value       any    `json:"Value"`
}

// Resource is one entry of a template's Resources, its properties as decoded from JSON (maps, slices, strings,
// float64s and bools; intrinsic functions stay objects such as {"Ref": "X"} or {"Fn::Sub": ...}).
type Resource struct {
	Type                string         `json:"Type"`
	Properties          map[string]any `json:"Properties"`
	Metadata            map[string]any `json:"Metadata"`
	DeletionPolicy      string         `json:"DeletionPolicy"`
	UpdateReplacePolicy string         `json:"UpdateReplacePolicy"`
	Condition           string         `json:"Condition"`
	// DependsOn is the resource's DependsOn, a string or a list of strings as decoded from JSON (nil without one).
	DependsOn any `json:"DependsOn"`
	// UpdatePolicy is the resource's UpdatePolicy attribute (SAM gives a function's alias one that hands its updates
	// to CodeDeploy), nil without one.
	UpdatePolicy map[string]any `json:"UpdatePolicy"`
}

// OfType returns the logical ids of the resources of type typ, sorted.
func (t *Template) OfType(typ string) []string {
	var ids []string
	for id, r := range t.Resources {
		if r.Type == typ {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// ProjectTemplate returns the path of the repository's template.yaml, found by walking up from the working
// directory.
func ProjectTemplate() (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "template.yaml"), nil
}

func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find repository root: %w", err)
	}
	root, err := samtemplate.FindRoot(wd)
	if err != nil {
		return "", fmt.Errorf("find repository root from %s: %w", wd, err)
	}
	return root, nil
}

// transformJSON transforms the SAM template at path (relative to the working directory) into the CloudFormation that
// `sam deploy` would create, with aws-sam-translator from the .venv of the repository around the working directory,
// with the parameter values params when not nil (as CloudFormation hands them to the transform: a
// CommaDelimitedList as a list), and returns the CloudFormation as JSON. Local CodeUri and DefinitionUri values
// become placeholder S3 locations, as `sam package` would upload them. The transform runs in us-east-1 and without
// the caller's AWS configuration, so its result does not depend on who runs it. It returns ErrNoTranslator (wrapped)
// when the translator is not installed, and the translator's messages when it rejects the template. Callers hold
// transformed's lock, which is also the translator's.
func transformJSON(ctx context.Context, path string, params map[string]any) ([]byte, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("transform %s: %w", path, err)
	}
	if worker == nil {
		if worker, err = startTranslator(); err != nil {
			return nil, err
		}
	}
	out, err := worker.transform(ctx, abs, params)
	var gone *translatorGone
	if errors.As(err, &gone) {
		worker = nil // the next transform starts another
	}
	return out, err
}

// worker is the test binary's translator, started by its first transform; guarded by transformed's lock.
var worker *translator

// translator is tools/sam_transform.py --serve, which transforms one template per request line: Python and the
// translator start once per test binary instead of once per transform (a second of CPU each). It ends when the
// test binary does, which closes its stdin.
type translator struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *syncio.Buffer
}

// translatorGone reports a translator that stopped answering (it exited, or a transform outlived its context and
// it was killed); the next transform starts a new one.
type translatorGone struct{ err error }

func (e *translatorGone) Error() string { return e.err.Error() }
func (e *translatorGone) Unwrap() error { return e.err }

func startTranslator() (*translator, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	python := filepath.Join(root, ".venv", "bin", "python")
	if _, err := os.Stat(python); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: no %s", ErrNoTranslator, python)
	}
	cmd := exec.Command(python, filepath.Join(root, "tools", "sam_transform.py"), "--serve")
	cmd.Dir = root
	cmd.Env = hermeticEnv(os.Environ())
	t := &translator{cmd: cmd, stderr: &syncio.Buffer{}}
	cmd.Stderr = t.stderr
	if t.in, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("start the translator: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("start the translator: %w", err)
	}
	t.out = bufio.NewReaderSize(stdout, 1<<20)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the translator: %w", err)
	}
	return t, nil
}

// transform sends one request and reads its answer. When ctx ends first, the translator is killed.
func (t *translator) transform(ctx context.Context, abs string, params map[string]any) ([]byte, error) {
	req, err := json.Marshal(map[string]any{"template": abs, "parameters": params})
	if err != nil {
		return nil, fmt.Errorf("transform %s: parameters: %w", abs, err)
	}
	t.stderr.Take() // what earlier transforms printed
	type answer struct {
		line []byte
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		if _, err := t.in.Write(append(req, '\n')); err != nil {
			done <- answer{err: err}
			return
		}
		line, err := t.out.ReadBytes('\n')
		done <- answer{line, err}
	}()
	var a answer
	select {
	case a = <-done:
	case <-ctx.Done():
		_ = t.cmd.Process.Kill()
		_ = t.cmd.Wait()
		return nil, &translatorGone{fmt.Errorf("transform %s: %w", abs, ctx.Err())}
	}
	if a.err != nil {
		_ = t.in.Close()
		werr := t.cmd.Wait()
		var exit *exec.ExitError
		if errors.As(werr, &exit) && exit.ExitCode() == exitNoTranslator {
			return nil, &translatorGone{fmt.Errorf("%w: %s", ErrNoTranslator, strings.TrimSpace(t.stderr.Take()))}
		}
		return nil, &translatorGone{fmt.Errorf("transform %s: the translator stopped (%v, %v): %s", abs, a.err, werr, strings.TrimSpace(t.stderr.Take()))}
	}
	var reply struct {
		Output json.RawMessage `json:"output"`
		Errors []string        `json:"errors"`
	}
	if err := json.Unmarshal(a.line, &reply); err != nil {
		return nil, fmt.Errorf("transform %s: the translator's answer: %w", abs, err)
	}
	if reply.Errors != nil {
		return nil, fmt.Errorf("transform %s: %s", abs, strings.Join(reply.Errors, "; "))
	}
	return reply.Output, nil
}

// hermeticEnv is environ without the caller's AWS settings (profile, region, credentials, config files), which the
// translator's boto3 session would otherwise read, and with the transform's region.
func hermeticEnv(environ []string) []string {
	env := slices.DeleteFunc(slices.Clone(environ), func(kv string) bool { return strings.HasPrefix(kv, "AWS_") })
	return append(env,
		"AWS_DEFAULT_REGION="+region,
		"AWS_CONFIG_FILE="+os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE="+os.DevNull,
		"AWS_EC2_METADATA_DISABLED=true",
	)
}

func decode(path string, out []byte) (*Template, error) {
	var t Template
	if err := json.Unmarshal(out, &t); err != nil {
		return nil, fmt.Errorf("decode transform of %s: %w", path, err)
	}
	if len(t.Resources) == 0 {
		return nil, fmt.Errorf("transform of %s has no resources", path)
	}
	return &t, nil
}
