package sfnengine

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl"
)

// Quotas of versions and aliases, as on AWS.
const (
	// MaxVersions is the most versions a state machine may have.
	MaxVersions = 1000
	// MaxAliases is the most aliases a state machine may have.
	MaxAliases = 100
)

// initialRevision is the revisionId PublishStateMachineVersion takes for the revision CreateStateMachine made.
const initialRevision = "INITIAL"

// StateMachineVersion is a published version: an immutable copy of a state machine's revision.
type StateMachineVersion struct {
	Arn         string `json:"arn"`
	Version     int    `json:"version"`
	Description string `json:"description,omitempty"`
	Definition  string `json:"definition"`
	RoleArn     string `json:"roleArn"`
	Config
	RevisionID   string    `json:"revisionId,omitempty"`
	CreationDate time.Time `json:"creationDate"`
}

// StateMachineAlias is a name that routes executions to one or two versions by weight.
type StateMachineAlias struct {
	Arn          string    `json:"arn"`
	Name         string    `json:"name"`
	Description  string    `json:"description,omitempty"`
	Routing      []Route   `json:"routingConfiguration"`
	CreationDate time.Time `json:"creationDate"`
	UpdateDate   time.Time `json:"updateDate"`
}

// Route is one version of an alias's routing configuration and the percentage of executions it runs.
type Route struct {
	VersionArn string `json:"stateMachineVersionArn"`
	Weight     int    `json:"weight"`
}

// CreateOptions is what CreateStateMachine was asked to publish.
type CreateOptions struct {
	Publish            bool   `json:"publish,omitempty"`
	VersionDescription string `json:"versionDescription,omitempty"`
}

// aliasNameRE is the API model's pattern of alias names: letters, digits, '_', '-' and '.', not only digits (so
// that an alias ARN is never a version ARN).
var aliasNameRE = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,80}$`)

// ValidAliasName reports whether s is a valid alias name.
func ValidAliasName(s string) bool {
	return aliasNameRE.MatchString(s) && strings.ContainsFunc(s, func(r rune) bool { return r < '0' || r > '9' })
}

// splitMachineArn checks a state machine ARN and splits it into the state machine's ARN and its qualifier: a
// version number, an alias name, or empty.
func splitMachineArn(arn string) (base, qualifier string, err error) {
	if _, err := arnName(arn, "stateMachine"); err != nil {
		return "", "", err
	}
	// Without allocating: StartExecution calls it for every execution.
	switch strings.Count(arn, ":") {
	case 6:
		return arn, "", nil
	case 7:
		i := strings.LastIndexByte(arn, ':')
		if i == len(arn)-1 {
			return "", "", fmt.Errorf("%w: %q", ErrInvalidArn, arn)
		}
		return arn[:i], arn[i+1:], nil
	}
	return "", "", fmt.Errorf("%w: %q", ErrInvalidArn, arn)
}

// versionNumber returns the number of a version qualifier, or 0 when q is not one.
func versionNumber(q string) int {
	n, err := strconv.Atoi(q)
	if err != nil || n <= 0 || strconv.Itoa(n) != q {
		return 0
	}
	return n
}

// version returns the version of sm with the ARN.
func (sm *StateMachine) version(arn string) (StateMachineVersion, bool) {
	for _, v := range sm.Versions {
		if v.Arn == arn {
			return v, true
		}
	}
	return StateMachineVersion{}, false
}

// alias returns the index of sm's alias with the ARN, or -1.
func (sm *StateMachine) alias(arn string) int {
	return slices.IndexFunc(sm.Aliases, func(a StateMachineAlias) bool { return a.Arn == arn })
}

// lookupMachine returns the engine's state machine with the (unqualified) ARN and a copy of its StateMachine; m is
// nil when the engine has none.
func (e *Engine) lookupMachine(arn string) (m *machine, sm StateMachine) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if m = e.sms[arn]; m != nil {
		sm = m.sm
	}
	return m, sm
}

// changeMachine applies change to a copy of the state machine with the ARN, saves the copy, and only then makes it
// the engine's: when change or the save fails, nothing changes. change must replace, never modify, the slices and
// maps of the copy (they are shared with the engine's state machine). Changes are serialized by smMu, so that saves
// reach the Store in the order the changes were made.
func (e *Engine) changeMachine(ctx context.Context, arn string, change func(sm *StateMachine) error) (StateMachine, error) {
	e.smMu.Lock()
	defer e.smMu.Unlock()
	m, sm := e.lookupMachine(arn)
	if m == nil {
		return StateMachine{}, fmt.Errorf("%w: %s", ErrStateMachineDoesNotExist, arn)
	}
	if err := change(&sm); err != nil {
		return StateMachine{}, err
	}
	if err := e.opts.Store.SaveStateMachine(ctx, sm); err != nil {
		return StateMachine{}, fmt.Errorf("save state machine %s: %w", arn, err)
	}
	e.mu.Lock()
	// Only what changeMachine's callers change, field by field: executions read the others without the lock.
	m.sm.Tags, m.sm.Versions, m.sm.LastVersion, m.sm.Aliases = sm.Tags, sm.Versions, sm.LastVersion, sm.Aliases
	e.mu.Unlock()
	return sm, nil
}

// publish adds a version of sm's current revision to it and returns it, or returns the version that revision
// already has (PublishStateMachineVersion is idempotent by revision). revision, when not empty, must be the current
// revision's id (INITIAL for the one CreateStateMachine made), else it is ErrConflict.
func (e *Engine) publish(sm *StateMachine, description, revision string) (StateMachineVersion, error) {
	if revision != "" {
		want := revision
		if want == initialRevision {
			want = ""
		}
		if want != sm.RevisionID {
			return StateMachineVersion{}, fmt.Errorf("%w: the revision of %s is not %s", ErrConflict, sm.Arn, revision)
		}
	}
	for _, v := range sm.Versions {
		if v.RevisionID == sm.RevisionID {
			return v, nil
		}
	}
	if len(sm.Versions) >= MaxVersions {
		return StateMachineVersion{}, fmt.Errorf("%w: %s has %d versions, the most a state machine may have",
			ErrQuotaExceeded, sm.Arn, MaxVersions)
	}
	n := sm.LastVersion + 1
	v := StateMachineVersion{Arn: sm.Arn + ":" + strconv.Itoa(n), Version: n, Description: description,
		Definition: sm.Definition, RoleArn: sm.RoleArn, Config: sm.Config, RevisionID: sm.RevisionID,
		CreationDate: e.opts.Clock.Now()}
	sm.Versions = append(slices.Clip(sm.Versions), v)
	sm.LastVersion = n
	return v, nil
}

// PublishStateMachineVersion publishes the current revision of a state machine as a version, or returns the
// version that revision already has. revisionID, when given, must be the current revision's (INITIAL for the one
// CreateStateMachine made), else it is ErrConflict. More than MaxVersions versions is ErrQuotaExceeded.
func (e *Engine) PublishStateMachineVersion(ctx context.Context, arn, description, revisionID string) (StateMachineVersion, error) {
	base, q, err := splitMachineArn(arn)
	if err != nil {
		return StateMachineVersion{}, err
	}
	if q != "" {
		return StateMachineVersion{}, fmt.Errorf("%w: %s", ErrStateMachineDoesNotExist, arn)
	}
	var v StateMachineVersion
	_, err = e.changeMachine(ctx, base, func(sm *StateMachine) error {
		v, err = e.publish(sm, description, revisionID)
		return err
	})
	return v, err
}

// ListStateMachineVersions returns the versions of a state machine, newest first: none for a state machine that
// does not exist (AWS's ListStateMachineVersions has no error for it). A version or alias ARN is ErrInvalidArn.
func (e *Engine) ListStateMachineVersions(_ context.Context, arn string) ([]StateMachineVersion, error) {
	base, q, err := splitMachineArn(arn)
	if err != nil {
		return nil, err
	}
	if q != "" {
		return nil, fmt.Errorf("%w: %q", ErrInvalidArn, arn)
	}
	e.mu.Lock()
	var vs []StateMachineVersion
	if m, ok := e.sms[base]; ok {
		vs = slices.Clone(m.sm.Versions)
	}
	e.mu.Unlock()
	slices.Reverse(vs)
	return vs, nil
}

// DeleteStateMachineVersion deletes a version; one that does not exist changes nothing. A version an alias routes
// to is ErrConflict. Its running executions go on.
func (e *Engine) DeleteStateMachineVersion(ctx context.Context, arn string) error {
	base, q, err := splitMachineArn(arn)
	if err != nil {
		return err
	}
	if versionNumber(q) == 0 {
		return fmt.Errorf("%w: %q", ErrInvalidArn, arn)
	}
	_, err = e.changeMachine(ctx, base, func(sm *StateMachine) error {
		if _, ok := sm.version(arn); !ok {
			return errNothingToDo
		}
		for _, a := range sm.Aliases {
			for _, r := range a.Routing {
				if r.VersionArn == arn {
					return fmt.Errorf("%w: version %s is referenced by alias %s", ErrConflict, arn, a.Arn)
				}
			}
		}
		sm.Versions = slices.DeleteFunc(slices.Clone(sm.Versions), func(v StateMachineVersion) bool { return v.Arn == arn })
		return nil
	})
	if errors.Is(err, errNothingToDo) || errors.Is(err, ErrStateMachineDoesNotExist) {
		return nil
	}
	if err == nil {
		e.mu.Lock()
		delete(e.vms, arn)
		e.mu.Unlock()
	}
	return err
}

// errNothingToDo ends a changeMachine that has nothing to change.
var errNothingToDo = errors.New("sfnengine: nothing to do")

// checkRouting checks an alias's routing configuration: one or two distinct versions of one state machine (the
// one returned), weights 0-100 summing to 100. A version that does not exist is ErrResourceNotFound.
func (e *Engine) checkRouting(routes []Route) (string, error) {
	if len(routes) == 0 || len(routes) > 2 {
		return "", fmt.Errorf("%w: the routing configuration must have one or two versions", ErrInvalidRouting)
	}
	var base string
	sum := 0
	for i, r := range routes {
		b, q, err := splitMachineArn(r.VersionArn)
		if err != nil {
			return "", err
		}
		if versionNumber(q) == 0 {
			return "", fmt.Errorf("%w: %s is not a state machine version ARN", ErrInvalidRouting, r.VersionArn)
		}
		if i > 0 && b != base {
			return "", fmt.Errorf("%w: the versions must belong to the same state machine", ErrInvalidRouting)
		}
		if i > 0 && r.VersionArn == routes[0].VersionArn {
			return "", fmt.Errorf("%w: the versions must be different", ErrInvalidRouting)
		}
		if r.Weight < 0 || r.Weight > 100 {
			return "", fmt.Errorf("%w: a weight must be between 0 and 100", ErrInvalidRouting)
		}
		base = b
		sum += r.Weight
	}
	if sum != 100 {
		return "", fmt.Errorf("%w: the weights must sum to 100, not %d", ErrInvalidRouting, sum)
	}
	return base, nil
}

// versionsExist returns ErrResourceNotFound for the first routed version sm does not have.
func versionsExist(sm *StateMachine, routes []Route) error {
	for _, r := range routes {
		if _, ok := sm.version(r.VersionArn); !ok {
			return fmt.Errorf("%w: %s", ErrResourceNotFound, r.VersionArn)
		}
	}
	return nil
}

// CreateStateMachineAlias creates an alias of the state machine whose versions routes names. Creating an alias
// that exists with the same description and routing returns it; with others it is ErrConflict. A name that is not
// valid is ErrInvalidName, a routing that is not valid ErrInvalidRouting, a version that does not exist
// ErrResourceNotFound, more than MaxAliases aliases ErrQuotaExceeded.
func (e *Engine) CreateStateMachineAlias(ctx context.Context, name, description string, routes []Route) (StateMachineAlias, error) {
	if !ValidAliasName(name) {
		return StateMachineAlias{}, fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	base, err := e.checkRouting(routes)
	if err != nil {
		return StateMachineAlias{}, err
	}
	var out StateMachineAlias
	_, err = e.changeMachine(ctx, base, func(sm *StateMachine) error {
		arn := base + ":" + name
		if i := sm.alias(arn); i >= 0 {
			a := sm.Aliases[i]
			if a.Description == description && slices.Equal(a.Routing, routes) {
				out = a
				return errNothingToDo
			}
			return fmt.Errorf("%w: alias %s exists with another description or routing configuration", ErrConflict, arn)
		}
		if err := versionsExist(sm, routes); err != nil {
			return err
		}
		if len(sm.Aliases) >= MaxAliases {
			return fmt.Errorf("%w: %s has %d aliases, the most a state machine may have", ErrQuotaExceeded, base, MaxAliases)
		}
		now := e.opts.Clock.Now()
		out = StateMachineAlias{Arn: arn, Name: name, Description: description, Routing: slices.Clone(routes),
			CreationDate: now, UpdateDate: now}
		sm.Aliases = append(slices.Clip(sm.Aliases), out)
		return nil
	})
	switch {
	case errors.Is(err, errNothingToDo):
		return out, nil
	case errors.Is(err, ErrStateMachineDoesNotExist):
		return StateMachineAlias{}, fmt.Errorf("%w: %s", ErrResourceNotFound, routes[0].VersionArn)
	}
	return out, err
}

// aliasArn checks an alias ARN and returns its state machine's ARN.
func aliasArn(arn string) (string, error) {
	base, q, err := splitMachineArn(arn)
	if err != nil {
		return "", err
	}
	if q == "" || versionNumber(q) != 0 {
		return "", fmt.Errorf("%w: %q", ErrInvalidArn, arn)
	}
	return base, nil
}

// DescribeStateMachineAlias returns the alias with the ARN, or ErrResourceNotFound.
func (e *Engine) DescribeStateMachineAlias(_ context.Context, arn string) (StateMachineAlias, error) {
	base, err := aliasArn(arn)
	if err != nil {
		return StateMachineAlias{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if m, ok := e.sms[base]; ok {
		if i := m.sm.alias(arn); i >= 0 {
			return m.sm.Aliases[i], nil
		}
	}
	return StateMachineAlias{}, fmt.Errorf("%w: %s", ErrResourceNotFound, arn)
}

// UpdateStateMachineAlias changes an alias's description (when description is not nil) and routing (when routes is
// not nil) and returns it. It returns ErrResourceNotFound for an alias or a version that does not exist,
// ErrInvalidRouting for a routing that is not valid or whose versions are another state machine's.
func (e *Engine) UpdateStateMachineAlias(ctx context.Context, arn string, description *string, routes []Route) (StateMachineAlias, error) {
	base, err := aliasArn(arn)
	if err != nil {
		return StateMachineAlias{}, err
	}
	if routes != nil {
		b, err := e.checkRouting(routes)
		if err != nil {
			return StateMachineAlias{}, err
		}
		if b != base {
			return StateMachineAlias{}, fmt.Errorf("%w: the versions must belong to the alias's state machine", ErrInvalidRouting)
		}
	}
	var out StateMachineAlias
	_, err = e.changeMachine(ctx, base, func(sm *StateMachine) error {
		i := sm.alias(arn)
		if i < 0 {
			return fmt.Errorf("%w: %s", ErrResourceNotFound, arn)
		}
		a := sm.Aliases[i]
		if description != nil {
			a.Description = *description
		}
		if routes != nil {
			if err := versionsExist(sm, routes); err != nil {
				return err
			}
			a.Routing = slices.Clone(routes)
		}
		a.UpdateDate = e.opts.Clock.Now()
		sm.Aliases = slices.Clone(sm.Aliases)
		sm.Aliases[i] = a
		out = a
		return nil
	})
	if errors.Is(err, ErrStateMachineDoesNotExist) {
		return StateMachineAlias{}, fmt.Errorf("%w: %s", ErrResourceNotFound, arn)
	}
	return out, err
}

// DeleteStateMachineAlias deletes an alias, or returns ErrResourceNotFound. Executions it started go on.
func (e *Engine) DeleteStateMachineAlias(ctx context.Context, arn string) error {
	base, err := aliasArn(arn)
	if err != nil {
		return err
	}
	_, err = e.changeMachine(ctx, base, func(sm *StateMachine) error {
		i := sm.alias(arn)
		if i < 0 {
			return fmt.Errorf("%w: %s", ErrResourceNotFound, arn)
		}
		sm.Aliases = slices.Delete(slices.Clone(sm.Aliases), i, i+1)
		return nil
	})
	if errors.Is(err, ErrStateMachineDoesNotExist) {
		return fmt.Errorf("%w: %s", ErrResourceNotFound, arn)
	}
	return err
}

// ListStateMachineAliases returns the aliases of a state machine by name or, given a version ARN, the aliases that
// route to that version. It returns ErrStateMachineDoesNotExist, or ErrResourceNotFound for a version that does not
// exist.
func (e *Engine) ListStateMachineAliases(_ context.Context, arn string) ([]StateMachineAlias, error) {
	base, q, err := splitMachineArn(arn)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	m, ok := e.sms[base]
	var as []StateMachineAlias
	var hasVersion bool
	if ok {
		as = slices.Clone(m.sm.Aliases)
		_, hasVersion = m.sm.version(arn)
	}
	e.mu.Unlock()
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: %s", ErrStateMachineDoesNotExist, base)
	case q != "" && versionNumber(q) == 0:
		return nil, fmt.Errorf("%w: %q", ErrInvalidArn, arn)
	case q != "" && !hasVersion:
		return nil, fmt.Errorf("%w: %s", ErrResourceNotFound, arn)
	case q != "":
		as = slices.DeleteFunc(as, func(a StateMachineAlias) bool {
			return !slices.ContainsFunc(a.Routing, func(r Route) bool { return r.VersionArn == arn })
		})
	}
	slices.SortFunc(as, func(a, b StateMachineAlias) int { return strings.Compare(a.Name, b.Name) })
	return as, nil
}

// versionMachineLocked returns the machine that runs version v of m, compiling it on first use.
func (e *Engine) versionMachineLocked(m *machine, v StateMachineVersion) (*machine, error) {
	if vm, ok := e.vms[v.Arn]; ok {
		return vm, nil
	}
	def, err := asl.Load([]byte(v.Definition))
	if err != nil {
		return nil, fmt.Errorf("load version %s: %w", v.Arn, err)
	}
	vm := &machine{sm: StateMachine{Arn: m.sm.Arn, Name: m.sm.Name, Definition: v.Definition, RoleArn: v.RoleArn,
		Type: m.sm.Type, CreationDate: v.CreationDate, Config: v.Config}, def: def}
	if e.vms == nil {
		e.vms = map[string]*machine{}
	}
	e.vms[v.Arn] = vm
	return vm, nil
}

// targetLocked resolves the ARN StartExecution was given: a state machine, one of its versions, or an alias (whose
// version is picked at random by weight). It returns the machine to run and the version and alias ARNs the
// execution reports.
func (e *Engine) targetLocked(arn string) (m *machine, versionArn, aliasArnOut string, err error) {
	base, q, err := splitMachineArn(arn)
	if err != nil {
		return nil, "", "", err
	}
	m, ok := e.sms[base]
	if !ok {
		return nil, "", "", fmt.Errorf("%w: %s", ErrStateMachineDoesNotExist, arn)
	}
	if q == "" {
		return m, "", "", nil
	}
	versionArn = arn
	if versionNumber(q) == 0 {
		i := m.sm.alias(arn)
		if i < 0 {
			return nil, "", "", fmt.Errorf("%w: %s", ErrStateMachineDoesNotExist, arn)
		}
		routes := m.sm.Aliases[i].Routing
		versionArn = routes[0].VersionArn
		if len(routes) == 2 && randomInt(0, 100) >= int64(routes[0].Weight) {
			versionArn = routes[1].VersionArn
		}
		aliasArnOut = arn
	}
	v, ok := m.sm.version(versionArn)
	if !ok {
		return nil, "", "", fmt.Errorf("%w: %s", ErrStateMachineDoesNotExist, versionArn)
	}
	vm, err := e.versionMachineLocked(m, v)
	if err != nil {
		return nil, "", "", err
	}
	return vm, versionArn, aliasArnOut, nil
}

// machineType returns the type of the state machine an ARN names, itself or through one of its versions or aliases
// (all of which have its type); "" when there is none.
func (e *Engine) machineType(arn string) string {
	base, _, err := splitMachineArn(arn)
	if err != nil {
		return ""
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if m, ok := e.sms[base]; ok {
		return m.sm.Type
	}
	return ""
}
