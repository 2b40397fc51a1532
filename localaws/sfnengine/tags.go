package sfnengine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
)

// MaxTags is the most tags a resource may have, as on AWS.
const MaxTags = 50

// tagged finds what a taggable ARN names: a state machine (unqualified: versions and aliases have no tags of their
// own) or an activity. It returns ErrInvalidArn when the ARN is neither kind.
func tagged(arn string) (kind string, err error) {
	for _, k := range []string{"stateMachine", "activity"} {
		if _, err := arnName(arn, k); err == nil {
			if k == "stateMachine" && strings.Count(arn, ":") > 6 {
				return "", fmt.Errorf("%w: %s", ErrResourceNotFound, arn)
			}
			return k, nil
		}
	}
	return "", fmt.Errorf("%w: %q", ErrInvalidArn, arn)
}

// TagResource adds tags to a state machine or an activity, replacing the values of keys it has. It returns
// ErrInvalidArn, ErrResourceNotFound, or ErrTooManyTags when the resource would have more than MaxTags tags (and then
// changes nothing).
func (e *Engine) TagResource(ctx context.Context, arn string, tags map[string]string) error {
	return e.retag(ctx, arn, func(cur map[string]string) (map[string]string, error) {
		next := maps.Clone(cur)
		if next == nil {
			next = map[string]string{}
		}
		maps.Copy(next, tags)
		if len(next) > MaxTags {
			return nil, fmt.Errorf("%w: %s would have %d tags, more than %d", ErrTooManyTags, arn, len(next), MaxTags)
		}
		return next, nil
	})
}

// UntagResource removes the tags with the keys from a state machine or an activity; keys it does not have are
// ignored. It returns ErrInvalidArn or ErrResourceNotFound.
func (e *Engine) UntagResource(ctx context.Context, arn string, keys []string) error {
	return e.retag(ctx, arn, func(cur map[string]string) (map[string]string, error) {
		next := maps.Clone(cur)
		for _, k := range keys {
			delete(next, k)
		}
		if len(next) == 0 {
			next = nil
		}
		return next, nil
	})
}

// ListTagsForResource returns the tags of a state machine or an activity (a copy). It returns ErrInvalidArn or
// ErrResourceNotFound.
func (e *Engine) ListTagsForResource(_ context.Context, arn string) (map[string]string, error) {
	kind, err := tagged(arn)
	if err != nil {
		return nil, err
	}
	if kind == "activity" {
		var tags map[string]string
		err := e.activities.withTagged(arn, func(a *activity) error {
			tags = maps.Clone(a.Tags)
			return nil
		})
		return tags, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	m, ok := e.sms[arn]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrResourceNotFound, arn)
	}
	return maps.Clone(m.sm.Tags), nil
}

// retag replaces a resource's tags with what change makes of them (change must not modify its argument), saving
// the resource first: when change or the save fails, nothing changes.
func (e *Engine) retag(ctx context.Context, arn string, change func(map[string]string) (map[string]string, error)) error {
	kind, err := tagged(arn)
	if err != nil {
		return err
	}
	if kind == "activity" {
		return e.activities.withTagged(arn, func(a *activity) error {
			tags, err := change(a.Tags)
			if err != nil {
				return err
			}
			next := a.Activity
			next.Tags = tags
			if s, ok := e.opts.Store.(activityStore); ok {
				if err := s.SaveActivity(ctx, next); err != nil {
					return fmt.Errorf("save activity %s: %w", arn, err)
				}
			}
			a.Tags = tags
			return nil
		})
	}
	_, err = e.changeMachine(ctx, arn, func(sm *StateMachine) error {
		tags, err := change(sm.Tags)
		if err != nil {
			return err
		}
		sm.Tags = tags
		return nil
	})
	if errors.Is(err, ErrStateMachineDoesNotExist) {
		return fmt.Errorf("%w: %s", ErrResourceNotFound, arn)
	}
	return err
}

// withTagged runs fn on the activity with the ARN while holding the registry's lock, and returns what fn returns;
// it returns ErrResourceNotFound, without calling fn, when there is no such activity.
func (r *activityRegistry) withTagged(arn string, fn func(a *activity) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.lookupLocked(arn)
	if a == nil {
		return fmt.Errorf("%w: %s", ErrResourceNotFound, arn)
	}
	return fn(a)
}
