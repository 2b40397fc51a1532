package sfnengine

import (
	"errors"
	"testing"
)

func TestSplitMachineArn(t *testing.T) {
	const sm = "arn:aws:states:us-east-1:123456789012:stateMachine:sm"
	tests := []struct {
		name, arn, base, qualifier string
		invalid                    bool
	}{
		{name: "state machine", arn: sm, base: sm},
		{name: "version", arn: sm + ":12", base: sm, qualifier: "12"},
		{name: "alias", arn: sm + ":prod", base: sm, qualifier: "prod"},
		{name: "empty qualifier", arn: sm + ":", invalid: true},
		{name: "two qualifiers", arn: sm + ":1:2", invalid: true},
		{name: "activity", arn: "arn:aws:states:us-east-1:123456789012:activity:a", invalid: true},
		{name: "not an ARN", arn: "sm", invalid: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, q, err := splitMachineArn(tt.arn)
			if tt.invalid {
				if !errors.Is(err, ErrInvalidArn) {
					t.Fatalf("err = %v, want ErrInvalidArn", err)
				}
				return
			}
			if err != nil || base != tt.base || q != tt.qualifier {
				t.Fatalf("= %q, %q, %v; want %q, %q", base, q, err, tt.base, tt.qualifier)
			}
		})
	}
}

func TestVersionNumberAndAliasName(t *testing.T) {
	for q, want := range map[string]int{"1": 1, "1000": 1000, "0": 0, "01": 0, "-1": 0, "prod": 0, "1a": 0} {
		if got := versionNumber(q); got != want {
			t.Errorf("versionNumber(%q) = %d, want %d", q, got, want)
		}
	}
	for name, want := range map[string]bool{"prod": true, "v1.2_beta-3": true, "12": false, "": false, "a:b": false,
		"a b": false, string(make([]byte, 81)): false} {
		if got := ValidAliasName(name); got != want {
			t.Errorf("ValidAliasName(%q) = %v, want %v", name, got, want)
		}
	}
}
