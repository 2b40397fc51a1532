package sfnengine

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/transferflow/orchestrator/localaws/asl"
	"github.com/transferflow/orchestrator/localaws/asl/jsonvalue"
)

// uncatchable reports errors that Retry and Catch never handle (States.ALL excludes them).
func uncatchable(f *failure) bool {
	return f.Error == ErrNameRuntime || f.Error == ErrNameDataLimitExceeded
}

func matches(names []string, errName string, task bool) bool {
	for _, n := range names {
		switch {
		case n == errName:
			return true
		case n == ErrNameAll:
			return true
		case n == ErrNameTaskFailed && task && errName != ErrNameTimeout && errName != ErrNameHeartbeatTimeout:
			return true
		}
	}
	return false
}

// backoff returns the delay before retry number attempt (0-based) of r.
func backoff(r asl.Retrier, attempt int64) time.Duration {
	secs := float64(r.IntervalSeconds) * math.Pow(r.BackoffRate, float64(attempt))
	if r.MaxDelaySeconds > 0 && secs > float64(r.MaxDelaySeconds) {
		secs = float64(r.MaxDelaySeconds)
	}
	if secs > 366*24*3600 {
		secs = 366 * 24 * 3600
	}
	d := time.Duration(secs * float64(time.Second))
	if r.JitterStrategy == "FULL" && d > 0 {
		d = time.Duration(rand.Int64N(int64(d)))
	}
	return d
}

// sleep waits d on the engine clock; it reports false when ctx ended first.
func (x *execution) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	select {
	case <-x.eng.opts.Clock.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}

// runWithRetry runs a Task, Parallel or Map state with its Retry and Catch. It returns the output, whether a
// catcher handled a failure (then next is the catcher's Next), or the failure.
func (x *execution) runWithRetry(ctx context.Context, sr *stateRun, input any, th *thread) (any, bool, string, *failure) {
	st := sr.st
	eff := input
	if !st.JSONata {
		var fail *failure
		if eff, fail = x.filterInput(sr, input); fail != nil {
			return nil, false, "", fail
		}
	}
	var fail *failure
	attempts := make([]int64, len(st.Retry))
	copy(attempts, sr.attempts) // a restored wait's counters
	sr.attempts = attempts
	task := st.Type == asl.TypeTask
	for {
		var out any
		switch st.Type {
		case asl.TypeTask:
			out, fail = x.attemptTask(ctx, sr, eff, input, th)
		case asl.TypeParallel:
			out, fail = x.attemptParallel(ctx, sr, eff, input, th)
		case asl.TypeMap:
			out, fail = x.attemptMap(ctx, sr, eff, input, th)
		}
		if fail == nil {
			if !task {
				x.forgetPartial(st)
			}
			return out, false, "", nil
		}
		if ctx.Err() != nil || uncatchable(fail) {
			return nil, false, "", fail
		}
		retried := false
		for i, r := range st.Retry {
			if !matchesFailure(r.ErrorEquals, fail, task) {
				continue
			}
			if attempts[i] < r.MaxAttempts {
				d := backoff(r, attempts[i])
				attempts[i]++
				sr.retry++
				sr.ctx, sr.ctxState = nil, nil // $$.State.RetryCount changed
				if !x.sleep(ctx, d) {
					return nil, false, "", fail
				}
				retried = true
			}
			break
		}
		if retried {
			continue
		}
		switch st.Type {
		case asl.TypeParallel:
			x.emit(th, true, EventParallelFailed, "", nil)
		case asl.TypeMap:
			x.emit(th, true, EventMapStateFailed, "", nil)
		}
		for i, c := range st.Catch {
			if !matchesFailure(c.ErrorEquals, fail, task) {
				continue
			}
			errOut := jsonvalue.FromPairs("Error", fail.Error, "Cause", fail.Cause)
			sr.errOut, sr.hasErrOut, sr.result, sr.hasResult = errOut, true, nil, false
			if f := x.evalAssign(sr, sr.sp.catchAssign[i], errOut); f != nil {
				return nil, false, "", f
			}
			if st.JSONata {
				out := any(errOut)
				if t := sr.sp.catchOutput[i]; t != nil {
					var f *failure
					if out, f = x.evalJ(sr, t); f != nil {
						return nil, false, "", f
					}
				}
				return out, true, c.Next, nil
			}
			out, f := x.resultPath(sr, sr.sp.catch[i], input, errOut)
			if f != nil {
				return nil, false, "", f
			}
			return out, true, c.Next, nil
		}
		return nil, false, "", fail
	}
}

// finishResult applies ResultSelector, Assign, ResultPath and OutputPath to a state's result (JSONPath), or
// evaluates Assign and Output with the result as $states.result (JSONata).
func (x *execution) finishResult(sr *stateRun, input, result any) (any, *failure) {
	sr.result, sr.hasResult = result, true
	if sr.st.JSONata {
		if fail := x.evalAssign(sr, sr.sp.assign, result); fail != nil {
			return nil, fail
		}
		return x.outputJSONata(sr, result)
	}
	if sr.sp.resultSel != nil {
		var fail *failure
		result, fail = x.payload(sr, sr.sp.resultSel, result)
		if fail != nil {
			return nil, fail
		}
	}
	return x.placeResult(sr, input, result)
}

// placeResult evaluates Assign with a state's result, then applies ResultPath and OutputPath (JSONPath).
func (x *execution) placeResult(sr *stateRun, input, result any) (any, *failure) {
	if fail := x.evalAssign(sr, sr.sp.assign, result); fail != nil {
		return nil, fail
	}
	out, fail := x.resultPath(sr, sr.sp.resultPath, input, result)
	if fail != nil {
		return nil, fail
	}
	return x.outputPath(sr, out)
}

// waitJSONata returns how long a JSONata Wait state waits: its Seconds or Timestamp, each a number or an
// expression.
func (x *execution) waitJSONata(sr *stateRun) (time.Duration, *failure) {
	st := sr.st
	now := x.eng.opts.Clock.Now()
	switch {
	case sr.sp.jSeconds != nil:
		n, fail := x.evalJInt(sr, sr.sp.jSeconds, false)
		if fail != nil {
			return 0, fail
		}
		return time.Duration(n) * time.Second, nil
	case st.Seconds != nil:
		return time.Duration(*st.Seconds) * time.Second, nil
	case sr.sp.jTimestamp != nil:
		s, fail := x.evalJString(sr, sr.sp.jTimestamp)
		if fail != nil {
			return 0, fail
		}
		t, ok := timestamp(s)
		if !ok {
			return 0, x.queryError(sr, "Timestamp", "The Timestamp field cannot be parsed as an ISO-8601 extended offset date-time format string: %s", s)
		}
		return t.Sub(now), nil
	case st.Timestamp != "":
		t, _ := time.Parse(time.RFC3339Nano, st.Timestamp)
		return t.Sub(now), nil
	}
	return 0, nil
}

func (x *execution) runWait(ctx context.Context, sr *stateRun, input any) (any, *failure) {
	st := sr.st
	if st.JSONata {
		d, fail := x.waitJSONata(sr)
		if fail != nil {
			return nil, fail
		}
		if !x.sleep(ctx, d) {
			return nil, stopped
		}
		if fail := x.evalAssign(sr, sr.sp.assign, input); fail != nil {
			return nil, fail
		}
		return x.outputJSONata(sr, input)
	}
	eff, fail := x.filterInput(sr, input)
	if fail != nil {
		return nil, fail
	}
	now := x.eng.opts.Clock.Now()
	var d time.Duration
	switch {
	case st.Seconds != nil:
		d = time.Duration(*st.Seconds) * time.Second
	case st.SecondsPath != "":
		secs, fail := x.longParam(sr, "SecondsPath", st.SecondsPath, eff, 0)
		if fail != nil {
			return nil, fail
		}
		d = time.Duration(secs) * time.Second
	case st.Timestamp != "":
		t, _ := time.Parse(time.RFC3339Nano, st.Timestamp)
		d = t.Sub(now)
	case st.TimestampPath != "":
		v, fail := x.paramPath(sr, "TimestampPath", st.TimestampPath, eff)
		if fail != nil {
			return nil, fail
		}
		t, ok := timestamp(v)
		if !ok {
			return nil, x.paramProblem(sr, "TimestampPath", "does not reference a valid ISO-8601 extended offset date-time format string", st.TimestampPath, v)
		}
		d = t.Sub(now)
	}
	if fail := x.evalAssign(sr, sr.sp.assign, eff); fail != nil {
		return nil, fail
	}
	if !x.sleep(ctx, d) {
		return nil, stopped
	}
	return x.outputPath(sr, eff)
}

func (x *execution) attemptParallel(ctx context.Context, sr *stateRun, eff, input any, th *thread) (any, *failure) {
	st := sr.st
	in := eff
	if sr.sp.jArguments != nil {
		var fail *failure
		if in, fail = x.evalJ(sr, sr.sp.jArguments); fail != nil {
			return nil, fail
		}
	} else if sr.sp.parameters != nil {
		var fail *failure
		in, fail = x.payload(sr, sr.sp.parameters, eff)
		if fail != nil {
			return nil, fail
		}
	}
	started := x.emit(th, true, EventParallelStarted, "", nil)
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]any, len(st.Branches))
	fails := make([]*failure, len(st.Branches))
	done := x.redone(st)
	var wg sync.WaitGroup
	for i, b := range st.Branches {
		if out, ok := done[i]; ok { // succeeded before a redrive: not run again
			results[i] = out
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, f := x.safeRunMachine(bctx, b, b.StartAt, in, &thread{prev: started}, newScope(sr.vars))
			results[i], fails[i] = out, f
			if f != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	th.prev = x.lastEventID()
	for _, f := range fails {
		if f != nil {
			x.keepSucceeded(st, results, func(i int) bool { return fails[i] == nil })
			break
		}
	}
	for _, f := range fails {
		if f != nil && f != stopped {
			return nil, f
		}
	}
	if ctx.Err() != nil {
		return nil, stopped
	}
	x.emit(th, false, EventParallelSucceeded, "", nil)
	return x.finishResult(sr, input, results)
}

// mapItems returns a Map state's items, its MaxConcurrency (from MaxConcurrencyPath when given) and the function
// that builds the input of item i (ItemSelector or Parameters applied). An iteration's input is built when the
// iteration starts, so that no more than MaxConcurrency of them are alive at once (a selector over a large array
// could otherwise build gigabytes up front); checkItems evaluates every selector once before the first iteration all
// the same, so that one failing fails the state before any iteration runs.
func (x *execution) mapItems(sr *stateRun, eff any) ([]any, int64, func(int) (any, *failure), *failure) {
	st := sr.st
	var itemsVal any
	var fail *failure
	switch {
	case sr.sp.jItems != nil:
		itemsVal, fail = x.evalJ(sr, sr.sp.jItems)
	case st.JSONata:
		itemsVal = eff
	default:
		itemsVal, fail = x.selectPath(sr, sr.sp.itemsPath, eff)
	}
	if fail != nil {
		return nil, 0, nil, fail
	}
	items, ok := itemsVal.([]any)
	if !ok && st.JSONata {
		if sr.sp.jItems != nil {
			return nil, 0, nil, x.unexpectedType(sr, sr.sp.jItems, "array", itemsVal)
		}
		// AWS records no location for this one.
		return nil, 0, nil, x.evaluationFailed(sr, "", "Map state input must be an array but was: "+marshal(itemsVal))
	}
	if !ok {
		return nil, 0, nil, x.runtimeErr(sr, "Invalid path '%s' : the path does not resolve to an array: %s", itemsPathText(st), marshal(itemsVal))
	}
	conc := st.MaxConcurrency
	if sr.sp.jMaxConc != nil {
		if conc, fail = x.evalJInt(sr, sr.sp.jMaxConc, false); fail != nil {
			return nil, 0, nil, fail
		}
	}
	if p := st.MaxConcurrencyPath; p != "" {
		v, fail := x.paramPath(sr, "MaxConcurrencyPath", p, eff)
		if fail != nil {
			return nil, 0, nil, fail
		}
		// AWS accepts a number or a string holding one ("1", as a variable assigned from a literal holds it), and
		// words a value that is neither as recorded.
		c, ok := intValue(v)
		if !ok {
			return nil, 0, nil, x.runtimeErr(sr, "The MaxConcurrencyPath field refers to value \"%s\" which is not a valid integer: %s", valueText(v), p)
		}
		if c < 0 {
			return nil, 0, nil, x.paramProblem(sr, "MaxConcurrencyPath", "references a negative value", p, v)
		}
		conc = c
	}
	selector := sr.sp.itemSelector
	if st.JSONata {
		selector = nil
	}
	if sr.sp.parameters != nil {
		selector = sr.sp.parameters
	}
	jselector := sr.sp.jItemSelector
	if selector == nil && jselector == nil {
		return items, conc, func(i int) (any, *failure) { return items[i], nil }, nil
	}
	itemInput := func(i int) (any, *failure) {
		isr := *sr
		isr.mapItem = jsonvalue.FromPairs("Index", json.Number(strconv.Itoa(i)), "Value", items[i])
		isr.ctx, isr.ctxState = nil, nil
		if jselector != nil {
			return x.evalJ(&isr, jselector)
		}
		return x.payload(&isr, selector, eff)
	}
	return items, conc, itemInput, nil
}

// checkItems builds every item's input once (see mapItems), when a selector builds them, and returns the first
// failure.
func checkItems(sr *stateRun, n int, itemInput func(int) (any, *failure)) *failure {
	if sr.sp.itemSelector == nil && sr.sp.parameters == nil && sr.sp.jItemSelector == nil {
		return nil
	}
	for i := range n {
		if _, f := itemInput(i); f != nil {
			return f
		}
	}
	return nil
}

func (x *execution) attemptMap(ctx context.Context, sr *stateRun, eff, input any, th *thread) (any, *failure) {
	st := sr.st
	items, conc, itemInput, fail := x.mapItems(sr, eff)
	if fail != nil {
		return nil, fail
	}
	if st.ItemProcessor.ProcessorMode == "DISTRIBUTED" {
		return x.attemptDistributedMap(ctx, sr, eff, input, th, items, conc, itemInput)
	}
	x.emit(th, true, EventMapStateStarted, "mapStateStartedEventDetails", map[string]any{"length": len(items)})
	if f := checkItems(sr, len(items), itemInput); f != nil {
		return nil, f
	}
	results := make([]any, len(items))
	succeeded := make([]bool, len(items))
	done := x.redone(st)
	var mu sync.Mutex
	var firstFail *failure
	lastSucceeded := int64(0)
	runOne := func(mctx context.Context, i int) *failure {
		if out, ok := done[i]; ok { // succeeded before a redrive: not run again
			mu.Lock()
			results[i], succeeded[i] = out, true
			mu.Unlock()
			return nil
		}
		mu.Lock()
		it := &thread{prev: th.prev}
		mu.Unlock()
		in, f := itemInput(i)
		if f != nil {
			return f
		}
		x.emit(it, true, EventMapIterStarted, "mapIterationStartedEventDetails", map[string]any{"index": i, "name": st.Name})
		out, f := x.safeRunMachine(mctx, st.ItemProcessor, st.ItemProcessor.StartAt, in, it, newScope(sr.vars))
		mu.Lock()
		defer mu.Unlock()
		if f != nil {
			if f == stopped {
				x.emit(it, false, EventMapIterAborted, "mapIterationAbortedEventDetails", map[string]any{"index": i, "name": st.Name})
				return f
			}
			x.emit(it, false, EventMapIterFailed, "mapIterationFailedEventDetails", map[string]any{"index": i, "name": st.Name})
			th.prev = it.prev
			return f
		}
		results[i], succeeded[i] = out, true
		lastSucceeded = x.emit(it, false, EventMapIterSucceeded, "mapIterationSucceededEventDetails", map[string]any{"index": i, "name": st.Name})
		th.prev = it.prev
		return nil
	}
	if conc == 1 {
		for i := range items {
			if f := runOne(ctx, i); f != nil {
				x.keepSucceeded(st, results, func(i int) bool { return succeeded[i] })
				return nil, f
			}
		}
	} else {
		limit := int(conc)
		if limit == 0 || limit > 40 {
			limit = 40
		}
		mctx, cancel := context.WithCancel(ctx)
		defer cancel()
		sem := make(chan struct{}, limit)
		var wg sync.WaitGroup
		for i := range items {
			if mctx.Err() != nil {
				break
			}
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				if f := runOne(mctx, i); f != nil {
					mu.Lock()
					if firstFail == nil && f != stopped {
						firstFail = f
					}
					mu.Unlock()
					cancel()
				}
			}()
		}
		wg.Wait()
		if firstFail != nil {
			x.keepSucceeded(st, results, func(i int) bool { return succeeded[i] })
			return nil, firstFail
		}
	}
	if ctx.Err() != nil {
		x.keepSucceeded(st, results, func(i int) bool { return succeeded[i] })
		return nil, stopped
	}
	if lastSucceeded != 0 {
		th.prev = lastSucceeded
	}
	x.emit(th, false, EventMapStateSucceeded, "", nil)
	return x.finishResult(sr, input, results)
}

func itemsPathText(st *asl.State) string {
	if st.ItemsPath.Set && !st.ItemsPath.Null {
		return st.ItemsPath.Path
	}
	return "$"
}
