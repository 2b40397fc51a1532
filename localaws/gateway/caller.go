package gateway

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// The messages API Gateway answers, with 403 and a {"message": ...} body, to a request whose SigV4 Authorization
// header it cannot accept. A scope message ends in ". " and several are joined, as AWS joins them.
const (
	msgNotKeyValue           = "'%s' not a valid key=value pair (missing equal-sign) in Authorization header: '%s'."
	msgRequiresCredential    = "Authorization header requires 'Credential' parameter. "
	msgRequiresSignature     = "Authorization header requires 'Signature' parameter. "
	msgRequiresSignedHeaders = "Authorization header requires 'SignedHeaders' parameter. "
	msgRequiresDate          = "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. "
	msgCredentialElements    = "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term, got '%s'"
	msgScopeRegion           = "Credential should be scoped to a valid region, not '%s'. "
	msgScopeService          = "Credential should be scoped to correct service: 'execute-api'. "
	msgScopeTerminator       = "Credential should be scoped with a valid terminator: 'aws4_request', not '%s'. "
	msgInvalidToken          = "The security token included in the request is invalid."
	msgSignatureMismatch     = "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
)

// authError is API Gateway's answer to a request it cannot authenticate: 403 with the error as the message. Its
// gateway response is INVALID_SIGNATURE when the header is whole but its signature or token cannot be valid, and
// MISSING_AUTHENTICATION_TOKEN when the header is incomplete or malformed (AWS documents no type of its own for
// an incomplete signature).
type authError struct {
	msg       string
	signature bool
}

func (e authError) Error() string { return e.msg }

// incomplete is the authError of a malformed or incomplete Authorization header.
func incomplete(msg string) authError { return authError{msg: msg} }

// invalid is the authError of a header whose signature or token cannot be valid.
func invalid(msg string) authError { return authError{msg: msg, signature: true} }

const (
	sigV4Algorithm = "AWS4-HMAC-SHA256"
	// localRole is the role of temporary credentials whose session token is not a role name.
	localRole = "local-role"
)

var (
	// accessKeyRe: AWS access key ids are word characters; locally one becomes an IAM user or role session name,
	// so it is at most 64 characters.
	accessKeyRe     = regexp.MustCompile(`^\w{1,64}$`)
	scopeDateRe     = regexp.MustCompile(`^[0-9]{8}$`)
	regionRe        = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	signedHeadersRe = regexp.MustCompile("^[a-z0-9!#$%&'*+.^_`|~-]+(;[a-z0-9!#$%&'*+.^_`|~-]+)*$")
	signatureRe     = regexp.MustCompile(`^[0-9a-f]{64}$`)
	// roleNameRe is IAM's pattern for a role name.
	roleNameRe = regexp.MustCompile(`^[\w+=,.@-]{1,64}$`)
	// roleArnRe is a role's ARN in the aws partition: its account, its path (/ or /a/b/) and its name.
	roleArnRe = regexp.MustCompile(`^arn:aws:iam::([0-9]{12}):role(/(?:[\x21-\x7e]*/)?)([\w+=,.@-]{1,64})$`)
)

// parseSigV4 reads an Authorization header
//
//	AWS4-HMAC-SHA256 Credential=KEY/yyyymmdd/region/execute-api/aws4_request, SignedHeaders=a;b;c, Signature=64 hex
//
// and returns its access key id. hasDate reports an X-Amz-Date or Date header on the request. A header API Gateway
// would refuse is an authError with API Gateway's message. The signature is not verified: the secret key is unknown.
func parseSigV4(header string, hasDate bool) (accessKey string, err error) {
	algorithm, rest, _ := strings.Cut(header, " ")
	params := map[string]string{}
	duplicate := false
	if rest = strings.TrimSpace(rest); rest != "" {
		for _, c := range strings.Split(rest, ",") {
			c = strings.TrimSpace(c)
			k, v, ok := strings.Cut(c, "=")
			if !ok {
				return "", incomplete(fmt.Sprintf(msgNotKeyValue, c, header))
			}
			if _, seen := params[k]; seen {
				duplicate = true
			}
			params[k] = v
		}
	}
	var missing strings.Builder
	for _, req := range []struct {
		ok  bool
		msg string
	}{
		{params["Credential"] != "", msgRequiresCredential},
		{params["Signature"] != "", msgRequiresSignature},
		{params["SignedHeaders"] != "", msgRequiresSignedHeaders},
		{hasDate, msgRequiresDate},
	} {
		if !req.ok {
			missing.WriteString(req.msg)
		}
	}
	if missing.Len() > 0 {
		return "", incomplete(missing.String() + "Authorization=" + header)
	}

	credential := params["Credential"]
	scope := strings.Split(credential, "/")
	if len(scope) != 5 {
		return "", incomplete(fmt.Sprintf(msgCredentialElements, credential))
	}
	var scopeErr strings.Builder
	if !regionRe.MatchString(scope[2]) {
		fmt.Fprintf(&scopeErr, msgScopeRegion, scope[2])
	}
	if scope[3] != "execute-api" {
		scopeErr.WriteString(msgScopeService)
	}
	if scope[4] != "aws4_request" {
		fmt.Fprintf(&scopeErr, msgScopeTerminator, scope[4])
	}
	if scopeErr.Len() > 0 {
		return "", incomplete(scopeErr.String())
	}
	if !accessKeyRe.MatchString(scope[0]) {
		return "", invalid(msgInvalidToken)
	}

	// What remains could only fail signature verification: the header cannot carry a valid signature.
	_, dateErr := time.Parse("20060102", scope[1])
	if algorithm != sigV4Algorithm || len(params) != 3 || duplicate || !scopeDateRe.MatchString(scope[1]) || dateErr != nil ||
		!signedHeadersRe.MatchString(params["SignedHeaders"]) || !signatureRe.MatchString(params["Signature"]) {
		return "", invalid(msgSignatureMismatch)
	}
	return scope[0], nil
}

// caller is the identity API Gateway would report for r, and its principal. The template protects the API with
// AWS_IAM. Locally the caller is read from the SigV4 Authorization header, which must be well formed but whose
// signature is not verified (no secret key is known):
//
//   - no Authorization header: the IAM user "local";
//   - temporary credentials (an access key id starting ASIA) with an X-Amz-Security-Token header: the role named by
//     the token, in a session named by the access key id, so fresh credentials are a new session of the same role,
//     as on AWS. A token that is a role's ARN, arn:aws:iam::ACCOUNT:role/[PATH/]NAME, names a role of that account
//     (another account's principal); a role name, a role of the local account; anything else, "local-role";
//   - temporary credentials without a token: refused, as API Gateway refuses them;
//   - any other access key id: the IAM user of that name.
//
// A header API Gateway would refuse is an authError.
func (g *Gateway) caller(r *http.Request) (events.APIGatewayRequestIdentity, Principal, error) {
	ip, _, _ := net.SplitHostPort(r.RemoteAddr)
	id := events.APIGatewayRequestIdentity{SourceIP: ip, UserAgent: r.UserAgent(), AccountID: g.account}
	user := func(name string) (events.APIGatewayRequestIdentity, Principal, error) {
		id.User, id.Caller = name, name
		id.UserArn = "arn:aws:iam::" + g.account + ":user/" + name
		return id, Principal{UserARN: id.UserArn, ARN: id.UserArn, Account: g.account}, nil
	}
	auth := r.Header.Values("Authorization")
	if len(auth) == 0 {
		return user("local")
	}
	if len(auth) > 1 {
		return id, Principal{}, invalid(msgSignatureMismatch)
	}
	hasDate := r.Header.Get("X-Amz-Date") != "" || r.Header.Get("Date") != ""
	key, err := parseSigV4(auth[0], hasDate)
	if err != nil {
		return id, Principal{}, err
	}
	id.AccessKey = key
	if !strings.HasPrefix(key, "ASIA") {
		return user(key)
	}
	token := r.Header.Get("X-Amz-Security-Token")
	if token == "" {
		return id, Principal{}, invalid(msgInvalidToken)
	}
	account, path, role := g.account, "/", localRole
	if m := roleArnRe.FindStringSubmatch(token); m != nil {
		account, path, role = m[1], m[2], m[3]
	} else if roleNameRe.MatchString(token) {
		role = token
	}
	roleArn := "arn:aws:iam::" + account + ":role" + path + role
	// A role of the local account without a path keeps the id of its name, whichever way the token names it.
	unique := roleID(role)
	if account != g.account || path != "/" {
		unique = roleID(roleArn)
	}
	session := key
	id.AccountID = account
	id.User = unique + ":" + session
	id.Caller = id.User
	id.UserArn = "arn:aws:sts::" + account + ":assumed-role/" + role + "/" + session
	return id, Principal{UserARN: id.UserArn, ARN: roleArn, Account: account}, nil
}

// roleID is a stable stand-in for the role's unique id (AROA and 17 characters of base32, as IAM's look), derived
// from its name (or its ARN, for a role of another account or under a path).
func roleID(role string) string {
	sum := sha256.Sum256([]byte(role))
	return "AROA" + base32.StdEncoding.EncodeToString(sum[:])[:17]
}
