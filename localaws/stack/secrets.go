package stack

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/transferflow/orchestrator/localaws/samtemplate"
)

// secretsFile is where, in --data-dir, the values of the template's secrets are kept.
const secretsFile = "secrets.json"

// secretArn is the local ARN of the template's secret id (its name locally is its logical id).
func secretArn(id string) string {
	return fmt.Sprintf("arn:aws:secretsmanager:%s:%s:secret:%s", Region, AccountID, id)
}

// localSecrets gives each AWS::SecretsManager::Secret of the template a value, as GenerateSecretString would on AWS:
// 52 random letters and digits, made at the first start. With dataDir they are kept in dataDir/secrets.json (mode
// 0600) and read back at the next start, so what they key (the orchestrator's record keys) survives a restart;
// without, they live as long as the process. The result maps each secret's logical id to its value.
func localSecrets(tmpl *samtemplate.Template, dataDir string) (map[string]string, error) {
	var ids []string
	for id, r := range tmpl.Resources {
		if r.Type == "AWS::SecretsManager::Secret" {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	values := map[string]string{}
	path := filepath.Join(dataDir, secretsFile)
	if dataDir != "" {
		b, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("secrets: %w", err)
		default:
			if err := json.Unmarshal(b, &values); err != nil {
				return nil, fmt.Errorf("secrets: %s: %w", path, err)
			}
		}
	}
	made := false
	for _, id := range ids {
		if values[id] == "" {
			values[id], made = rand.Text()+rand.Text(), true
		}
	}
	if dataDir != "" && made {
		b, err := json.MarshalIndent(values, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("secrets: %w", err)
		}
		if err := os.MkdirAll(dataDir, 0o755); err != nil {
			return nil, fmt.Errorf("secrets: %w", err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
			return nil, fmt.Errorf("secrets: %w", err)
		}
	}
	return values, nil
}

// resolveSecretRefs replaces the secretsmanager dynamic references in the functions' environments with the values of
// the template's secrets (localSecrets), as CloudFormation does at deploy time.
func resolveSecretRefs(fns []samtemplate.Function, tmpl *samtemplate.Template, dataDir string) error {
	values, err := localSecrets(tmpl, dataDir)
	if err != nil {
		return err
	}
	lookup := func(ref string) (string, error) {
		for id, value := range values {
			if ref == secretArn(id) || ref == id {
				return value, nil
			}
		}
		return "", fmt.Errorf("no AWS::SecretsManager::Secret of the template has this ARN or name")
	}
	for _, f := range fns {
		for k, v := range f.Environment {
			resolved, err := samtemplate.ResolveSecretRefs(v, lookup)
			if err != nil {
				return fmt.Errorf("function %s: %s: %w", f.LogicalID, k, err)
			}
			f.Environment[k] = resolved
		}
	}
	return nil
}
