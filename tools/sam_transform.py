"""Print the CloudFormation that `sam deploy` would create from a SAM template.

Usage: .venv/bin/python tools/sam_transform.py TEMPLATE [PARAMETERS] > transformed.json

PARAMETERS, a JSON object, gives parameter values as CloudFormation hands them to the transform on deploy (a
CommaDelimitedList as a list of strings); parameters it does not name take their defaults.

AWS's own aws-sam-translator (pinned in tools/requirements.txt) does the work: it is the code behind the
AWS::Serverless-2016-10-31 transform that CloudFormation runs on deploy. This script is only the glue that runs it
offline, with no AWS account or network:

- The template is read with samtranslator's own YAML loader, so CloudFormation tags (!Ref, !GetAtt, !Sub) become
  their JSON forms ({"Ref": ...}, {"Fn::GetAtt": [...]}).
- The translator refuses local paths, so local artifacts are replaced by placeholder S3 locations in the shapes
  `sam package` writes after uploading them: a function's CodeUri becomes an "s3://bucket/key" string, a state
  machine's DefinitionUri a {"Bucket": ..., "Key": ...} object. The placeholders name the resource, not a real
  object, so they show up as such in the output.
- Managed policy names are not looked up in IAM (get_managed_policy_map returns nothing); the project's policies
  are SAM policy templates and inline statements, which need no lookup.
- The region defaults to us-east-1 (AWS_DEFAULT_REGION) when none is set; ARNs in the output use ${AWS::Region}
  and ${AWS::Partition} anyway.

The CloudFormation template is printed as JSON on stdout. When the translator rejects the template, its errors are
printed on stderr, one a line, and the exit status is 1. Exit status 3 means aws-sam-translator is not installed
(`make test` installs it into .venv).
"""

import json
import os
import sys

try:
    from samtranslator.model.exceptions import InvalidDocumentException
    from samtranslator.parser.parser import Parser
    from samtranslator.translator.translator import Translator
    from samtranslator.yaml_helper import yaml_parse
except ImportError as err:
    print(f"sam_transform: aws-sam-translator is not installed ({err}); `make test` installs it into .venv",
          file=sys.stderr)
    sys.exit(3)

PLACEHOLDER_BUCKET = "sam-transform-placeholder"


def is_local(uri):
    """Whether uri is a local path that `sam package` would upload (an S3 URI or an object is left alone)."""
    return isinstance(uri, str) and not uri.startswith("s3://")


def use_placeholder_artifacts(template):
    """Replace local CodeUri and DefinitionUri values in place, as `sam package` would after uploading them."""
    for logical_id, resource in (template.get("Resources") or {}).items():
        if not isinstance(resource, dict):
            continue  # the translator reports it
        props = resource.get("Properties") or {}
        kind = resource.get("Type")
        if kind == "AWS::Serverless::Function" and is_local(props.get("CodeUri")):
            props["CodeUri"] = f"s3://{PLACEHOLDER_BUCKET}/{logical_id}.zip"
        elif kind == "AWS::Serverless::StateMachine" and is_local(props.get("DefinitionUri")):
            props["DefinitionUri"] = {"Bucket": PLACEHOLDER_BUCKET, "Key": f"{logical_id}.asl.json"}


def main(argv):
    if len(argv) not in (2, 3):
        print("usage: sam_transform.py TEMPLATE [PARAMETERS]", file=sys.stderr)
        return 2
    parameters = {}
    if len(argv) == 3:
        parameters = json.loads(argv[2])
        if not isinstance(parameters, dict):
            print("sam_transform: PARAMETERS is a JSON object", file=sys.stderr)
            return 2
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    with open(argv[1], encoding="utf-8") as f:
        template = yaml_parse(f.read())
    use_placeholder_artifacts(template)
    try:
        output = Translator(None, Parser()).translate(template, parameter_values=parameters,
                                                      get_managed_policy_map=lambda: {})
    except InvalidDocumentException as err:
        print(err.message, file=sys.stderr)
        for cause in err.causes:
            print(cause.message, file=sys.stderr)
        return 1
    json.dump(output, sys.stdout, indent=2, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
