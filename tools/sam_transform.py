"""Print the CloudFormation that `sam deploy` would create from a SAM template.

Usage: .venv/bin/python tools/sam_transform.py TEMPLATE [PARAMETERS] > transformed.json
       .venv/bin/python tools/sam_transform.py --serve

PARAMETERS, a JSON object, gives parameter values as CloudFormation hands them to the transform on deploy (a
CommaDelimitedList as a list of strings); parameters it does not name take their defaults.

With --serve it transforms one template per line of stdin, {"template": PATH, "parameters": OBJECT or null}, and
answers each with one line on stdout, {"output": CLOUDFORMATION} or {"errors": [MESSAGE, ...]}, until stdin closes.
Importing the translator is most of a run's second of CPU, so the tests (lab/deploy), which transform the template
with several sets of parameters and fixtures, start it once per test binary this way.

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


def transform(path, parameters):
    """The CloudFormation of the SAM template at path with the parameter values, and None; or None and the
    translator's messages when it rejects the template."""
    with open(path, encoding="utf-8") as f:
        template = yaml_parse(f.read())
    use_placeholder_artifacts(template)
    try:
        return Translator(None, Parser()).translate(template, parameter_values=parameters,
                                                    get_managed_policy_map=lambda: {}), None
    except InvalidDocumentException as err:
        return None, [err.message] + [cause.message for cause in err.causes]


def serve(lines, out):
    """Answer each request line with one line, until the lines end. A request that fails in any other way (it cannot
    be read, its template cannot be opened or parsed, the translator raises) is answered with the exception; the
    next request is served as usual."""
    for line in lines:
        try:
            request = json.loads(line)
            parameters = request.get("parameters") or {}
            if not isinstance(parameters, dict):
                raise ValueError("parameters is a JSON object")
            output, errors = transform(request["template"], parameters)
        except Exception as err:  # pylint: disable=broad-except # this request's answer; the server goes on
            output, errors = None, [f"sam_transform: {type(err).__name__}: {err}"]
        out.write(json.dumps({"output": output} if errors is None else {"errors": errors}))
        out.write("\n")
        out.flush()
    return 0


def main(argv):
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    if argv[1:] == ["--serve"]:
        return serve(sys.stdin, sys.stdout)
    if len(argv) not in (2, 3):
        print("usage: sam_transform.py TEMPLATE [PARAMETERS] | --serve", file=sys.stderr)
        return 2
    parameters = {}
    if len(argv) == 3:
        parameters = json.loads(argv[2])
        if not isinstance(parameters, dict):
            print("sam_transform: PARAMETERS is a JSON object", file=sys.stderr)
            return 2
    output, errors = transform(argv[1], parameters)
    if errors is not None:
        for message in errors:
            print(message, file=sys.stderr)
        return 1
    json.dump(output, sys.stdout, indent=2, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
