"""schemathesis_sigv4 signs schemathesis's requests with AWS Signature Version 4, as API Gateway's AWS_IAM
authorization wants them: e2e's TestOpenAPIConformance loads it with SCHEMATHESIS_HOOKS=schemathesis_sigv4.

Two callers sign, chosen by the operation's path: the operator (access key SIGV4_OPERATOR_KEY, default "operator",
so the IAM user arn:aws:iam::000000000000:user/operator on the local stack) for the /operator/ routes, and a client
(SIGV4_CLIENT_KEY, default "client") for the others. The signer is botocore's own SigV4Auth for the service
execute-api in SIGV4_REGION (default us-east-1), over the request as it is sent (method, URL, headers, body), with
a dummy secret key: the local gateway reads the caller from the Authorization header and does not verify the
signature, which it could not without the secret.
"""

import os

import requests.auth
import schemathesis
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

REGION = os.environ.get("SIGV4_REGION", "us-east-1")


class SigV4(requests.auth.AuthBase):
    """SigV4 signs a prepared request as the IAM user whose access key id is access_key."""

    def __init__(self, access_key):
        self.signer = SigV4Auth(Credentials(access_key, "dummy-secret-key"), "execute-api", REGION)

    def __call__(self, r):
        body = r.body
        if isinstance(body, str):
            body = body.encode("utf-8")
        headers = {k: v for k, v in r.headers.items() if k.lower() not in ("authorization", "x-amz-date")}
        req = AWSRequest(method=r.method, url=r.url, data=body or b"", headers=headers)
        self.signer.add_auth(req)
        r.headers["Authorization"] = req.headers["Authorization"]
        r.headers["X-Amz-Date"] = req.headers["X-Amz-Date"]
        return r


# The first provider whose filter matches signs the request: the operator for /operator/, the client elsewhere.
schemathesis.auth.set_from_requests(SigV4(os.environ.get("SIGV4_OPERATOR_KEY", "operator"))).apply_to(
    path_regex="^/operator/"
)
schemathesis.auth.set_from_requests(SigV4(os.environ.get("SIGV4_CLIENT_KEY", "client")))
