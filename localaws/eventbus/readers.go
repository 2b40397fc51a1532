package eventbus

import (
	"context"
	"net/http"
	"regexp"
	"strings"
)

// Who may read the log groups. They hold every caller's outcome events, references included; on AWS only a principal
// with IAM rights on a log group reads it, and the API's callers have none. Locally that principal is the stack's own
// user: the IAM user local, which an unsigned request is (as the local gateway names an unsigned API caller) and
// which a request signed with the access key id local is. A request signed as any other principal is refused with
// AccessDeniedException naming it. The local stack verifies no signature: a principal is what the request claims.
const (
	localUser          = "local"
	localRole          = "local-role"
	temporaryKeyPrefix = "ASIA"
)

// roleNameRe is IAM's pattern for a role name.
var roleNameRe = regexp.MustCompile(`^[\w+=,.@-]{1,64}$`)

// principalKey is the context key of the request's principal, set by ServeHTTP for the operations.
type principalKey struct{}

// claimed is what a request claims to be: the principal's ARN, or why it cannot be read.
type claimed struct {
	arn string
	err error
}

// principal is the ARN of the principal r is signed as, read from its SigV4 Authorization header as the local
// gateway reads an API caller: unsigned, the IAM user local; an access key id starting ASIA with an
// X-Amz-Security-Token, a session (named by the key) of the role the token names, or of local-role when the token is
// no role name; any other access key id, the IAM user of that name. A header without a credential is an error.
func principal(r *http.Request, account string) (string, error) {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return "arn:aws:iam::" + account + ":user/" + localUser, nil
	}
	_, credential, _ := strings.Cut(auth, "Credential=")
	key, _, _ := strings.Cut(credential, "/")
	if key == "" {
		return "", errorf(codeIncompleteSig, msgNoCredential)
	}
	token := r.Header.Get("X-Amz-Security-Token")
	if !strings.HasPrefix(key, temporaryKeyPrefix) || token == "" {
		return "arn:aws:iam::" + account + ":user/" + key, nil
	}
	role := localRole
	if roleNameRe.MatchString(token) {
		role = token
	}
	return "arn:aws:sts::" + account + ":assumed-role/" + role + "/" + key, nil
}

// mayRead refuses the principal of ctx the reading of group unless it is the local user.
func (s *Server) mayRead(ctx context.Context, group string) error {
	who, _ := ctx.Value(principalKey{}).(claimed)
	switch {
	case who.err != nil:
		return who.err
	case who.arn == "arn:aws:iam::"+s.opts.AccountID+":user/"+localUser:
		return nil
	}
	return errorf(codeAccessDenied, msgAccessDenied, who.arn, s.opts.Region, s.opts.AccountID, group)
}
