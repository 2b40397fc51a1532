package saminvoke

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/transferflow/orchestrator/localaws/samtemplate"
)

// samAccountID is the account `sam local` gives AWS::AccountId, AWS_ACCOUNT_ID and function ARNs.
const samAccountID = "123456789012"

// samResolver resolves intrinsics as `sam local` does when nothing is deployed: a !Ref to a resource is its logical
// id, a !GetAtt ….Arn is a Lambda function ARN in SAM's account, and any other attribute stays unresolved, which
// SAM turns into an empty value.
type samResolver struct{ region string }

// Ref implements samtemplate.Resolver.
func (samResolver) Ref(logicalID string) (string, error) { return logicalID, nil }

// GetAtt implements samtemplate.Resolver.
func (r samResolver) GetAtt(logicalID, attribute string) (string, error) {
	if attribute == "Arn" {
		return functionArn(r.region, logicalID), nil
	}
	return "", nil
}

func functionArn(region, name string) string {
	return fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", region, samAccountID, name)
}

// envFile is a --env-vars file: {"Parameters": {...}, "<LogicalId>": {...}}, values of any JSON type.
type envFile map[string]map[string]json.RawMessage

func readEnvFile(path string) (envFile, error) {
	if path == "" {
		return envFile{}, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("env vars: %w", err)
	}
	var f envFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("env vars %s: want {\"Parameters\": {…}, \"<LogicalId>\": {…}} with objects as values: %w", path, err)
	}
	return f, nil
}

// stringify turns an env.json value into a variable's value as SAM does: strings as they are, numbers as written,
// true and false in lower case, and null, objects and arrays as "".
func stringify(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	switch t := strings.TrimSpace(string(v)); {
	case t == "true" || t == "false":
		return t
	case t != "" && (t[0] == '-' || t[0] >= '0' && t[0] <= '9'):
		return t
	}
	return ""
}

// hostRewrite is what `host.docker.internal` (how SAM's container reaches the machine it runs on) becomes: the
// function runs on that machine itself.
var hostRewrite = strings.NewReplacer("host.docker.internal", "127.0.0.1")

// credentials are the AWS credentials and region the function gets.
type credentials struct {
	region, accessKeyID, secretAccessKey, sessionToken string
}

// credentialsFrom reads them from the environment, with SAM's placeholders where it has none.
func credentialsFrom(getenv func(string) string) credentials {
	c := credentials{
		region:          firstOf(getenv("AWS_REGION"), getenv("AWS_DEFAULT_REGION"), "us-east-1"),
		accessKeyID:     getenv("AWS_ACCESS_KEY_ID"),
		secretAccessKey: getenv("AWS_SECRET_ACCESS_KEY"),
		sessionToken:    getenv("AWS_SESSION_TOKEN"),
	}
	if c.accessKeyID == "" || c.secretAccessKey == "" {
		c.accessKeyID, c.secretAccessKey, c.sessionToken = "defaultkey", "defaultsecret", ""
	}
	return c
}

func firstOf(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// environment is the function's environment as `sam local invoke` builds it, then what the Lambda execution
// environment adds:
//
//  1. SAM's own variables: AWS_SAM_LOCAL=true, AWS_LAMBDA_FUNCTION_NAME, _MEMORY_SIZE, _TIMEOUT, _HANDLER,
//     _VERSION, AWS_LAMBDA_LOG_GROUP_NAME and _STREAM_NAME, AWS_REGION and AWS_DEFAULT_REGION, the credentials and
//     AWS_ACCOUNT_ID;
//  2. each variable the template declares (Globals applied), valued by the template, else by env.json's
//     Parameters, else by the function's own env.json entry (the last one wins). A variable the template does not
//     declare is not set, whatever env.json says: it is returned in ignored;
//  3. what Lambda's runtime environment sets and a function cannot change: AWS_LAMBDA_RUNTIME_API (added when the
//     process starts), _HANDLER, LAMBDA_TASK_ROOT, AWS_LAMBDA_LOG_FORMAT from LoggingConfig, TZ, LANG and PATH.
//
// host.docker.internal in any value becomes 127.0.0.1.
func environment(fn samtemplate.Function, file envFile, creds credentials, taskRoot string) (env map[string]string, ignored []string) {
	env = map[string]string{
		"AWS_SAM_LOCAL":                   "true",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": strconv.Itoa(fn.MemorySize),
		"AWS_LAMBDA_FUNCTION_TIMEOUT":     strconv.Itoa(int(fn.Timeout.Seconds())),
		"AWS_LAMBDA_FUNCTION_HANDLER":     fn.Handler,
		"AWS_LAMBDA_FUNCTION_NAME":        fn.LogicalID,
		"AWS_LAMBDA_FUNCTION_VERSION":     "$LATEST",
		"AWS_LAMBDA_LOG_GROUP_NAME":       "aws/lambda/" + fn.LogicalID,
		"AWS_LAMBDA_LOG_STREAM_NAME":      "$LATEST",
		"AWS_REGION":                      creds.region,
		"AWS_DEFAULT_REGION":              creds.region,
		"AWS_ACCESS_KEY_ID":               creds.accessKeyID,
		"AWS_SECRET_ACCESS_KEY":           creds.secretAccessKey,
		"AWS_ACCOUNT_ID":                  samAccountID,
	}
	if creds.sessionToken != "" {
		env["AWS_SESSION_TOKEN"] = creds.sessionToken
	}
	for name, value := range fn.Environment {
		for _, layer := range []map[string]json.RawMessage{file["Parameters"], file[fn.LogicalID]} {
			if v, ok := layer[name]; ok {
				value = stringify(v)
			}
		}
		env[name] = value
	}
	for name := range file[fn.LogicalID] {
		if _, declared := fn.Environment[name]; !declared {
			ignored = append(ignored, name)
		}
	}
	sort.Strings(ignored)
	logFormat := "Text"
	if strings.EqualFold(fn.LogFormat, "JSON") {
		logFormat = "JSON"
	}
	for k, v := range map[string]string{
		"_HANDLER":                       fn.Handler,
		"LAMBDA_TASK_ROOT":               taskRoot,
		"AWS_LAMBDA_LOG_FORMAT":          logFormat,
		"AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand",
		"TZ":                             ":UTC",
		"LANG":                           "en_US.UTF-8",
		"PATH":                           "/usr/local/bin:/usr/bin/:/bin:/opt/bin",
	} {
		env[k] = v
	}
	for k, v := range env {
		env[k] = hostRewrite.Replace(v)
	}
	return env, ignored
}

// environ turns env into KEY=VALUE pairs, sorted.
func environ(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
