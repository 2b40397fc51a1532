package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

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
// `sam deploy` would create: it runs tools/sam_transform.py (aws-sam-translator from the .venv of the repository
// around the working directory) with the parameter values params when not nil (as CloudFormation hands them to the
// transform: a CommaDelimitedList as a list), and returns its stdout, the CloudFormation as JSON. Local CodeUri and
// DefinitionUri values become placeholder S3 locations, as `sam package` would upload them. The transform runs in
// us-east-1 and without the caller's AWS configuration, so its result does not depend on who runs it. It returns
// ErrNoTranslator (wrapped) when the translator is not installed, and the translator's messages when it rejects the
// template.
func transformJSON(ctx context.Context, path string, params map[string]any) ([]byte, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("transform %s: %w", path, err)
	}
	python := filepath.Join(root, ".venv", "bin", "python")
	if _, err := os.Stat(python); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: no %s", ErrNoTranslator, python)
	}
	args := []string{filepath.Join(root, "tools", "sam_transform.py"), abs}
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("transform %s: parameters: %w", path, err)
		}
		args = append(args, string(b))
	}
	cmd := exec.CommandContext(ctx, python, args...)
	cmd.Dir = root
	cmd.Env = hermeticEnv(os.Environ())
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 3 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == exitNoTranslator {
		return nil, fmt.Errorf("%w: %s", ErrNoTranslator, strings.TrimSpace(stderr.String()))
	}
	if err != nil {
		return nil, fmt.Errorf("transform %s: %w: %s", path, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
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
