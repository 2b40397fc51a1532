// Package samtemplate reads the project's AWS SAM template (template.yaml), so that tests and the local stack take
// their wiring from the same file that `sam deploy` uses instead of repeating it.
//
// CloudFormation short-form tags (!Ref, !GetAtt, !Sub) are kept as tagged YAML nodes; callers resolve them with a
// Resolver that knows what each logical id stands for in their environment.
package samtemplate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"gopkg.in/yaml.v3"
)

// Template is a parsed SAM template.
type Template struct {
	Parameters map[string]Parameter `yaml:"Parameters"`
	Conditions map[string]yaml.Node `yaml:"Conditions"`
	Globals    map[string]yaml.Node `yaml:"Globals"`
	Resources  map[string]Resource  `yaml:"Resources"`
}

// Parameter is a template parameter with its default.
type Parameter struct {
	Type    string `yaml:"Type"`
	Default string `yaml:"Default"`
}

// Resource is one entry of Resources; Properties and Metadata stay YAML nodes so each consumer decodes what it needs.
type Resource struct {
	Type       string    `yaml:"Type"`
	Properties yaml.Node `yaml:"Properties"`
	Metadata   yaml.Node `yaml:"Metadata"`
}

// Table is a DynamoDB table declared in the template.
type Table struct {
	// LogicalID is the resource's name in the template; locally it is also the table name.
	LogicalID string
	// Create is the CreateTable request equivalent to the resource's properties.
	Create *dynamodb.CreateTableInput
	// TTLAttribute is the attribute of TimeToLiveSpecification, empty when TTL is off.
	TTLAttribute string
	// StreamViewType is StreamSpecification.StreamViewType (NEW_AND_OLD_IMAGES, NEW_IMAGE, OLD_IMAGE or KEYS_ONLY),
	// empty when the table has no stream. Create asks for the same stream.
	StreamViewType string
}

// Load reads and parses the template at path.
func Load(path string) (*Template, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read template: %w", err)
	}
	t, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Parse parses template text.
func Parse(b []byte) (*Template, error) {
	var t Template
	if err := yaml.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("parse template: %w", err)
	}
	if len(t.Resources) == 0 {
		return nil, errors.New("parse template: no Resources")
	}
	return &t, nil
}

// FindRoot returns the nearest directory at or above dir that holds template.yaml.
func FindRoot(dir string) (string, error) {
	for {
		if _, err := os.Stat(filepath.Join(dir, "template.yaml")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("template.yaml not found in any parent directory")
		}
		dir = parent
	}
}

// tableProps mirrors the AWS::DynamoDB::Table properties the project uses. The names are CloudFormation's, which
// match the DynamoDB API's for these fields.
type tableProps struct {
	TableName            string `yaml:"TableName"`
	BillingMode          string `yaml:"BillingMode"`
	AttributeDefinitions []struct {
		AttributeName string `yaml:"AttributeName"`
		AttributeType string `yaml:"AttributeType"`
	} `yaml:"AttributeDefinitions"`
	KeySchema              []keyElement `yaml:"KeySchema"`
	GlobalSecondaryIndexes []struct {
		IndexName  string       `yaml:"IndexName"`
		KeySchema  []keyElement `yaml:"KeySchema"`
		Projection struct {
			ProjectionType   string   `yaml:"ProjectionType"`
			NonKeyAttributes []string `yaml:"NonKeyAttributes"`
		} `yaml:"Projection"`
	} `yaml:"GlobalSecondaryIndexes"`
	TimeToLiveSpecification struct {
		AttributeName string `yaml:"AttributeName"`
		Enabled       bool   `yaml:"Enabled"`
	} `yaml:"TimeToLiveSpecification"`
	StreamSpecification struct {
		StreamViewType string `yaml:"StreamViewType"`
	} `yaml:"StreamSpecification"`
}

type keyElement struct {
	AttributeName string `yaml:"AttributeName"`
	KeyType       string `yaml:"KeyType"`
}

// Tables returns the template's AWS::DynamoDB::Table resources, sorted by logical id.
func (t *Template) Tables() ([]Table, error) {
	var out []Table
	for id, r := range t.Resources {
		if r.Type != "AWS::DynamoDB::Table" {
			continue
		}
		var p tableProps
		if err := r.Properties.Decode(&p); err != nil {
			return nil, fmt.Errorf("table %s: %w", id, err)
		}
		name := id
		if p.TableName != "" {
			name = p.TableName
		}
		in := &dynamodb.CreateTableInput{TableName: aws.String(name), BillingMode: ddbtypes.BillingMode(p.BillingMode)}
		for _, a := range p.AttributeDefinitions {
			in.AttributeDefinitions = append(in.AttributeDefinitions, ddbtypes.AttributeDefinition{
				AttributeName: aws.String(a.AttributeName), AttributeType: ddbtypes.ScalarAttributeType(a.AttributeType),
			})
		}
		in.KeySchema = keySchema(p.KeySchema)
		for _, g := range p.GlobalSecondaryIndexes {
			proj := &ddbtypes.Projection{ProjectionType: ddbtypes.ProjectionType(g.Projection.ProjectionType)}
			if len(g.Projection.NonKeyAttributes) > 0 {
				proj.NonKeyAttributes = g.Projection.NonKeyAttributes
			}
			in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, ddbtypes.GlobalSecondaryIndex{
				IndexName: aws.String(g.IndexName), KeySchema: keySchema(g.KeySchema), Projection: proj,
			})
		}
		tbl := Table{LogicalID: id, Create: in}
		if p.TimeToLiveSpecification.Enabled {
			tbl.TTLAttribute = p.TimeToLiveSpecification.AttributeName
		}
		// CloudFormation's StreamSpecification has only StreamViewType: a table that has one has a stream.
		if v := p.StreamSpecification.StreamViewType; v != "" {
			if !slices.Contains(ddbtypes.StreamViewType("").Values(), ddbtypes.StreamViewType(v)) {
				return nil, fmt.Errorf("table %s: StreamSpecification.StreamViewType %q is not one of %v", id, v, ddbtypes.StreamViewType("").Values())
			}
			tbl.StreamViewType = v
			in.StreamSpecification = &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: ddbtypes.StreamViewType(v)}
		}
		out = append(out, tbl)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LogicalID < out[j].LogicalID })
	return out, nil
}

func keySchema(ks []keyElement) []ddbtypes.KeySchemaElement {
	out := make([]ddbtypes.KeySchemaElement, 0, len(ks))
	for _, k := range ks {
		out = append(out, ddbtypes.KeySchemaElement{AttributeName: aws.String(k.AttributeName), KeyType: ddbtypes.KeyType(k.KeyType)})
	}
	return out
}
