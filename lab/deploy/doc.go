// Package deploy checks what `sam deploy` would create: it transforms template.yaml with AWS's own
// aws-sam-translator, the code behind the AWS::Serverless-2016-10-31 transform that CloudFormation runs on deploy,
// and gives tests the resulting CloudFormation to assert on.
//
// The translator is a Python library, pinned in tools/requirements.txt and installed by `make test` into the
// repository's .venv; tools/sam_transform.py runs it offline, with no AWS account or network. Transform returns
// the CloudFormation as a Template; TransformT and TransformFileT do the same for a test, skipping it (or failing it
// under CI=true) when the translator is not installed.
//
// Assertions about the deployed application (how its API is authorized and invokes its functions, who may call it,
// least-privilege IAM down to the partition keys of the table's items, alarms, logging) go in this package's tests;
// the helpers that find things in a Template (APIMethods, LambdaPermissions, Stages, ResourcePolicy, RoleStatements,
// PartitionKey) are here so that each assertion stays short. TransformWithParametersT transforms the template with
// parameter values, for what SAM itself resolves from them.
package deploy
