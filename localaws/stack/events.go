package stack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/transferflow/orchestrator/localaws/eventbus"
	"github.com/transferflow/orchestrator/localaws/eventpattern"
	"github.com/transferflow/orchestrator/localaws/lambdahost"
	"github.com/transferflow/orchestrator/localaws/samtemplate"
	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// rule delivers matching events to a function, as an EventBridge rule with a Lambda target does.
type rule struct {
	name     string
	function string
	pattern  *eventpattern.Pattern
	// probed: the pattern tests only probeFields, so publishes can match it before the event is built.
	probed bool
}

// schedule invokes a function periodically with a Scheduled Event.
type schedule struct {
	name     string
	function string
	every    time.Duration
}

// asyncRetryDelays are the pauses before the retries of an asynchronous invocation that failed. Lambda retries an
// async event twice (after about one and then two minutes); locally the same two retries come after 1 s and 2 s.
var asyncRetryDelays = []time.Duration{time.Second, 2 * time.Second}

// asyncThrottle is how Lambda retries an asynchronous invocation that was throttled: the event goes back to the
// queue and is tried again, without counting against the two retries, after a pause that grows from first to max,
// for at most maxAge ("How Lambda handles errors and retries with asynchronous invocation", AWS Lambda developer
// guide). Locally the retries also end when the stack stops.
var asyncThrottle = struct{ first, max, maxAge time.Duration }{time.Second, 5 * time.Minute, 6 * time.Hour}

func (s *stack) startRules() error {
	for _, f := range s.fns {
		for _, ev := range f.Events {
			switch ev.Type {
			case samtemplate.EventEventBridgeRule:
				p, err := eventpattern.Compile(ev.Pattern)
				if err != nil {
					return fmt.Errorf("%s.Events.%s: %w", f.LogicalID, ev.Name, err)
				}
				s.rules = append(s.rules, newRule(f.LogicalID+ev.Name, f.LogicalID, p))
			case samtemplate.EventSchedule:
				every, err := parseRate(ev.Schedule)
				if s.cfg.SweepInterval > 0 {
					every, err = s.cfg.SweepInterval, nil
				}
				if err != nil {
					return fmt.Errorf("%s.Events.%s: %w", f.LogicalID, ev.Name, err)
				}
				s.schedule = append(s.schedule, schedule{name: f.LogicalID + ev.Name, function: f.LogicalID, every: every})
			}
		}
	}
	return nil
}

var rateRe = regexp.MustCompile(`^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$`)

// parseRate reads an EventBridge rate expression; cron expressions are not run locally.
func parseRate(expr string) (time.Duration, error) {
	m := rateRe.FindStringSubmatch(expr)
	if m == nil {
		return 0, fmt.Errorf("schedule %q: only rate(N minutes|hours|days) runs locally (or set --sweep-interval)", expr)
	}
	n, _ := strconv.Atoi(m[1])
	unit := map[string]time.Duration{"minute": time.Minute, "minutes": time.Minute, "hour": time.Hour, "hours": time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour}[m[2]]
	if n < 1 {
		return 0, fmt.Errorf("schedule %q: the rate must be positive", expr)
	}
	return time.Duration(n) * unit, nil
}

// deliver is the engine's status-change subscriber: it hands the event to every function whose rule matches,
// asynchronously, as EventBridge does.
func (s *stack) deliver(_ context.Context, event []byte) {
	if s.dropped() {
		s.logger.Warn("status-change event dropped (fault status-change:drop)")
		return
	}
	for _, r := range s.rules {
		ok, err := r.pattern.MatchJSON(event)
		if err != nil || !ok {
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.invokeAsync(r.name, r.function, event)
		}()
	}
}

// eventsKept is how many events each log group keeps: as many as the stack keeps closed executions
// (--history-max-executions: 1,000 in memory, 10,000 with --data-dir), since each transfer publishes one outcome
// event, or the bus's own default (10,000) when executions are not bounded. Ten thousand events in memory were about
// 13 MB of live heap, several times that in RSS: the kept results' plateau rose by ~100 MB.
func eventsKept(c Config) int {
	if c.HistoryMaxExecutions > 0 {
		return c.HistoryMaxExecutions
	}
	return 0
}

// probeFields are the fields of a status-change event known before it is built (sfnengine.Options.Publishes).
var probeFields = map[string]bool{"source": true, "detail-type": true, "account": true, "region": true,
	"detail.status": true, "detail.stateMachineArn": true}

// newRule returns the rule delivering events that match p to function.
func newRule(name, function string, p *eventpattern.Pattern) rule {
	probed := true
	for _, f := range p.Paths() {
		probed = probed && probeFields[f]
	}
	return rule{name: name, function: function, pattern: p, probed: probed}
}

// publishes reports whether a status-change event of the state machine with the status could match one of the
// rules, so that the engine builds only the events a rule can deliver (sfnengine.Options.Publishes). A rule whose
// pattern tests only probeFields is matched against an event holding just those, which it matches exactly when it
// matches the full event; any other rule wants every event.
func (s *stack) publishes(stateMachineArn, status string) bool {
	probe := map[string]any{"source": "aws.states", "detail-type": sfnengine.StatusChangeDetailType, "account": AccountID,
		"region": Region, "detail": map[string]any{"status": status, "stateMachineArn": stateMachineArn}}
	for _, r := range s.rules {
		if !r.probed || r.pattern.Match(probe) {
			return true
		}
	}
	return false
}

// invokeAsync invokes a function with an event as Lambda's asynchronous invocation does: a failure is retried twice,
// and a throttled attempt is retried with a growing pause until the event is too old or the stack stops.
func (s *stack) invokeAsync(source, function string, event []byte) {
	start := time.Now()
	pause := asyncThrottle.first
	for attempt := 0; ; {
		_, err := s.invoker.Invoke(context.Background(), function, event)
		if err == nil {
			return
		}
		var se *sfnengine.ServiceError
		if errors.As(err, &se) && se.Name == lambdahost.ErrTooManyRequests {
			if time.Since(start)+pause > asyncThrottle.maxAge {
				s.logger.Error("event dropped: throttled until too old", "rule", source, "function", function, "error", err.Error())
				return
			}
			s.logger.Warn("event delivery throttled; retrying", "rule", source, "function", function, "retryIn", pause.String())
			if !s.pause(pause) {
				return
			}
			pause = min(2*pause, asyncThrottle.max)
			continue
		}
		if attempt >= len(asyncRetryDelays) {
			s.logger.Error("event delivery failed", "rule", source, "function", function, "attempts", attempt+1, "error", err.Error())
			return
		}
		s.logger.Warn("event delivery failed; retrying", "rule", source, "function", function, "error", err.Error())
		if !s.pause(asyncRetryDelays[attempt]) {
			return
		}
		attempt++
	}
}

// pause waits d, or until the stack stops; it reports whether the stack is still running.
func (s *stack) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.stopping:
		return false
	}
}

// startSchedules runs each schedule until ctx ends.
func (s *stack) startSchedules(ctx context.Context) {
	for _, sc := range s.schedule {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			t := time.NewTicker(sc.every)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case now := <-t.C:
					s.invokeAsync(sc.name, sc.function, scheduledEvent(s.newID(), sc.name, now))
				}
			}
		}()
	}
}

// scheduledEvent is the event EventBridge Scheduler sends a rule's target.
func scheduledEvent(id, ruleName string, now time.Time) []byte {
	b, _ := json.Marshal(map[string]any{
		"version": "0", "id": id, "detail-type": "Scheduled Event", "source": "aws.events",
		"account": AccountID, "time": now.UTC().Format(time.RFC3339), "region": Region,
		"resources": []string{fmt.Sprintf("arn:aws:events:%s:%s:rule/%s", Region, AccountID, ruleName)},
		"detail":    map[string]any{},
	})
	return b
}

// eventBus builds the local EventBridge from the template: its AWS::Events::EventBus resources and the enabled
// AWS::Events::Rule resources on them whose targets are log groups (other targets are not run locally, and said so
// in the log), with the --fault events:… faults. With --data-dir the log groups' events are kept in
// <data-dir>/events.
func (s *stack) eventBus() (*eventbus.Server, error) {
	var buses []string
	for id, r := range s.tmpl.Resources {
		if r.Type == "AWS::Events::EventBus" {
			buses = append(buses, id)
		}
	}
	rules, err := s.tmpl.EventRules(s.env(), s.names)
	if err != nil {
		return nil, err
	}
	var local []eventbus.Rule
	for _, r := range rules {
		if !r.Enabled {
			continue
		}
		p, err := eventpattern.Compile(r.Pattern)
		if err != nil {
			return nil, fmt.Errorf("%s.EventPattern: %w", r.LogicalID, err)
		}
		rule := eventbus.Rule{Name: r.LogicalID, EventBusName: r.EventBusName, Pattern: p}
		for _, arn := range r.Targets {
			name, ok := strings.CutPrefix(arn, logGroupArnPrefix)
			if !ok {
				s.logger.Warn("rule target not run locally", "rule", r.LogicalID, "target", arn)
				continue
			}
			rule.LogGroups = append(rule.LogGroups, strings.TrimSuffix(name, ":*"))
		}
		local = append(local, rule)
	}
	srv, err := eventbus.New(eventbus.Options{Region: Region, AccountID: AccountID, Buses: buses, Rules: local,
		DataDir: s.cfg.DataDir, MaxEvents: eventsKept(s.cfg), NewID: s.newID, Logger: s.logger})
	if err != nil {
		return nil, err
	}
	for _, f := range s.cfg.EventsFaults {
		srv.AddFault(f)
	}
	return srv, nil
}

// statusChangeFault is the target of the --fault that drops status-change events: status-change:drop[:times=N].
const statusChangeFault = "status-change"

// parseStatusChangeFault reads "status-change:drop[:times=N]": how many events it drops, -1 for every one.
func parseStatusChangeFault(spec string) (int, error) {
	parts := strings.Split(spec, ":")
	if len(parts) < 2 || len(parts) > 3 || parts[0] != statusChangeFault || parts[1] != "drop" {
		return 0, fmt.Errorf("fault %q: want %s:drop[:times=N]", spec, statusChangeFault)
	}
	if len(parts) == 2 {
		return -1, nil
	}
	v, ok := strings.CutPrefix(parts[2], "times=")
	n, err := strconv.Atoi(v)
	if !ok || err != nil || n < 1 {
		return 0, fmt.Errorf("fault %q: times must be a positive integer", spec)
	}
	return n, nil
}

// dropped reports whether the status-change fault drops this event, and counts it.
func (s *stack) dropped() bool {
	for {
		n := s.drops.Load()
		switch {
		case n == 0:
			return false
		case n < 0:
			return true
		case s.drops.CompareAndSwap(n, n-1):
			return true
		}
	}
}
