package samtemplate

import (
	"errors"
	"testing"
)

func TestResolveSecretRefs(t *testing.T) {
	secrets := map[string]string{"arn:aws:secretsmanager:us-east-1:000000000000:secret:Key": "s3cret", "Other": "x"}
	lookup := func(id string) (string, error) {
		if v, ok := secrets[id]; ok {
			return v, nil
		}
		return "", errors.New("no such secret")
	}
	tests := []struct {
		name, in, want, wantErr string
	}{
		{name: "no reference", in: "plain ${value}", want: "plain ${value}"},
		{name: "a secret by ARN", in: "{{resolve:secretsmanager:arn:aws:secretsmanager:us-east-1:000000000000:secret:Key:SecretString}}", want: "s3cret"},
		{name: "two references in text", in: "a-{{resolve:secretsmanager:Other:SecretString}}-{{resolve:secretsmanager:Other:SecretString}}-b", want: "a-x-x-b"},
		{name: "unknown secret", in: "{{resolve:secretsmanager:Nope:SecretString}}",
			wantErr: "dynamic reference {{resolve:secretsmanager:Nope:SecretString}}: no such secret"},
		{name: "a JSON key", in: "{{resolve:secretsmanager:Other:SecretString:password}}",
			wantErr: "dynamic reference {{resolve:secretsmanager:Other:SecretString:password}}: only {{resolve:secretsmanager:SECRET-ID:SecretString}} is resolved locally"},
		{name: "ssm", in: "{{resolve:ssm:/param}}",
			wantErr: "dynamic reference {{resolve:ssm:/param}}: only {{resolve:secretsmanager:SECRET-ID:SecretString}} is resolved locally"},
		{name: "unclosed", in: "{{resolve:secretsmanager:Other", wantErr: `dynamic reference "{{resolve:secretsmanager:Other": no closing }}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolveSecretRefs(tt.in, lookup)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("= %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
