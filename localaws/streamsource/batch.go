package streamsource

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
)

// batch is records of a shard sent to the function together.
type batch struct {
	records []*record // the records that passed the filters, in order
	// end is the server's sequence number of the last record the batch accounts for (its last record, or a record
	// after it that matched no filter): the checkpoint once the batch is handled.
	end string
	// attempts are the retries so far that count against MaximumRetryAttempts; invokes the invocations with these
	// records (both carried over to the halves of a bisected batch).
	attempts, invokes int
	last              ResponseContext // the last invocation's outcome
}

// outcome is what an invocation came to.
type outcome int

const (
	succeeded  outcome = iota // every record handled
	partial                   // batchItemFailures: the records from failedAt on failed
	failed                    // a function error, or batchItemFailures naming no record of the batch
	notInvoked                // Lambda did not run the function (a throttle, a service error)
)

// result is an invocation's outcome and, for partial, the index of the first failed record.
type result struct {
	outcome  outcome
	failedAt int
	reason   string
}

// handle sends b to the function until it is handled: delivered, or given up to the destination, retrying and
// bisecting as the mapping says, and checkpoints the shard after each part. It reports false when the mapping
// stopped before the batch was handled; the rest of it is then not checkpointed.
func (m *Mapping) handle(r *shardReader, first *batch) bool {
	queue := []*batch{first}
	pause := m.cfg.RetryPause
	for len(queue) > 0 {
		if m.stopping() {
			return false
		}
		b := queue[0]
		m.setOldest(r.id, b.records[0].created)
		if n := m.expired(b); n > 0 {
			old := &batch{records: b.records[:n], end: b.endBefore(n), attempts: b.attempts, invokes: b.invokes, last: b.last}
			m.discard(r, old, ConditionRecordAgeExceeded)
			if n == len(b.records) {
				queue = queue[1:]
				continue
			}
			b.records = b.records[n:]
		}
		res := m.invoke(b)
		switch res.outcome {
		case succeeded:
			// The iterator age and the checkpoint first, so that a caller who sees the records counted sees their age
			// gone and their checkpoint written.
			if len(queue) > 1 {
				m.setOldest(r.id, queue[1].records[0].created)
			} else {
				r.updateOldest()
			}
			r.checkpoint(b.end)
			m.delivered.Add(int64(len(b.records)))
			m.logger.Debug("stream: batch delivered", "shard", r.id, "records", len(b.records), "first", b.records[0].awsSeq,
				"last", b.records[len(b.records)-1].awsSeq, "invocations", b.invokes)
			queue = queue[1:]
			pause = m.cfg.RetryPause
			continue
		case partial:
			if res.failedAt > 0 {
				r.checkpoint(b.records[res.failedAt].prev)
				m.delivered.Add(int64(res.failedAt))
				b.records = b.records[res.failedAt:]
				pause = m.cfg.RetryPause
			}
		case failed:
			if m.cfg.BisectBatchOnFunctionError && len(b.records) > 1 {
				h := len(b.records) / 2
				left := &batch{records: b.records[:h], end: b.endBefore(h), attempts: b.attempts, invokes: b.invokes, last: b.last}
				right := &batch{records: b.records[h:], end: b.end, attempts: b.attempts, invokes: b.invokes, last: b.last}
				queue = append([]*batch{left, right}, queue[1:]...)
				m.retried.Add(1)
				m.logger.Warn("stream: batch failed; bisecting it", "shard", r.id, "records", len(b.records), "reason", res.reason,
					"first", b.records[0].awsSeq, "retryIn", pause.String())
				if !m.sleep(pause) {
					return false
				}
				pause = min(2*pause, m.cfg.MaxRetryPause)
				continue
			}
		}
		if res.outcome != notInvoked {
			// A function error or batchItemFailures: a retry that counts.
			if m.cfg.MaximumRetryAttempts >= 0 && b.attempts >= m.cfg.MaximumRetryAttempts {
				m.discard(r, b, ConditionRetryAttemptsExhausted)
				queue = queue[1:]
				continue
			}
			b.attempts++
		}
		m.retried.Add(1)
		m.logger.Warn("stream: batch failed; retrying", "shard", r.id, "records", len(b.records), "reason", res.reason,
			"first", b.records[0].awsSeq, "attempt", b.attempts, "retryIn", pause.String())
		if !m.sleep(pause) {
			return false
		}
		pause = min(2*pause, m.cfg.MaxRetryPause)
	}
	return true
}

// endBefore is the checkpoint once the records of b before its i-th are handled.
func (b *batch) endBefore(i int) string {
	if i < len(b.records) {
		return b.records[i].prev
	}
	return b.end
}

// expired is how many of b's first records are older than MaximumRecordAge (records are in the order they were
// written).
func (m *Mapping) expired(b *batch) int {
	if m.cfg.MaximumRecordAge <= 0 {
		return 0
	}
	n := 0
	for _, p := range b.records {
		if p.created.IsZero() || time.Since(p.created) <= m.cfg.MaximumRecordAge {
			break
		}
		n++
	}
	return n
}

// invoke sends b's records to the function as Lambda's DynamoDB event, {"Records":[…]}, and reads its response.
func (m *Mapping) invoke(b *batch) result {
	var buf bytes.Buffer
	buf.WriteString(`{"Records":[`)
	for i, p := range b.records {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(p.body)
	}
	buf.WriteString(`]}`)
	m.invocations.Add(1)
	b.invokes++
	out, err := m.cfg.Invoker.Invoke(m.invokeCtx, m.cfg.Function, buf.Bytes())
	if err != nil {
		var fe *sfnengine.FunctionError
		if errors.As(err, &fe) {
			b.last = ResponseContext{StatusCode: 200, ExecutedVersion: "$LATEST", FunctionError: "Unhandled"}
			return result{outcome: failed, reason: err.Error()}
		}
		b.last = ResponseContext{StatusCode: serviceStatus(err)}
		return result{outcome: notInvoked, reason: err.Error()}
	}
	b.last = ResponseContext{StatusCode: 200, ExecutedVersion: "$LATEST"}
	if !m.cfg.ReportBatchItemFailures {
		return result{outcome: succeeded}
	}
	return b.itemFailures(out)
}

// itemFailures reads a response's batchItemFailures: none (an empty or absent list, an empty or null response) is
// a success; otherwise the batch failed from its lowest failed record on, or as a whole when an itemIdentifier is
// empty, null or not one of the batch's sequence numbers ("Configuring partial batch response with DynamoDB and
// Lambda", AWS Lambda developer guide).
func (b *batch) itemFailures(out []byte) result {
	var resp map[string]json.RawMessage
	if len(bytes.TrimSpace(out)) == 0 || json.Unmarshal(out, &resp) != nil {
		return result{outcome: succeeded} // null, or not an object: no batchItemFailures
	}
	raw, ok := resp["batchItemFailures"]
	if !ok {
		return result{outcome: succeeded}
	}
	var failures []struct {
		ItemIdentifier *string `json:"itemIdentifier"`
	}
	if err := json.Unmarshal(raw, &failures); err != nil {
		return result{outcome: failed, reason: "batchItemFailures: " + err.Error()}
	}
	if len(failures) == 0 {
		return result{outcome: succeeded}
	}
	lowest := len(b.records)
	for _, f := range failures {
		if f.ItemIdentifier == nil || *f.ItemIdentifier == "" {
			return result{outcome: failed, reason: "batchItemFailures: an empty itemIdentifier"}
		}
		i := b.index(*f.ItemIdentifier)
		if i < 0 {
			return result{outcome: failed, reason: "batchItemFailures: itemIdentifier " + *f.ItemIdentifier + " is not in the batch"}
		}
		lowest = min(lowest, i)
	}
	return result{outcome: partial, failedAt: lowest, reason: "batchItemFailures from " + b.records[lowest].awsSeq}
}

// index is the index of the record whose delivered sequence number is seq, -1 for none.
func (b *batch) index(seq string) int {
	for i, p := range b.records {
		if p.awsSeq == seq {
			return i
		}
	}
	return -1
}

// serviceStatus is the HTTP status Lambda answers an Invoke with for a service error.
func serviceStatus(err error) int {
	var se *sfnengine.ServiceError
	if !errors.As(err, &se) {
		return 500
	}
	switch se.Name {
	case "Lambda.TooManyRequestsException":
		return 429
	case "Lambda.ResourceNotFoundException":
		return 404
	}
	return 500
}

// discard gives b up: its FailureRecord goes to the destination, is logged, and the shard is checkpointed past it.
func (m *Mapping) discard(r *shardReader, b *batch, condition string) {
	first, last := b.records[0], b.records[len(b.records)-1]
	rec := FailureRecord{
		RequestContext: RequestContext{RequestID: m.cfg.NewID(), FunctionARN: m.cfg.FunctionARN, Condition: condition,
			ApproximateInvokeCount: b.invokes},
		ResponseContext: b.last,
		Version:         "1.0",
		Timestamp:       time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		DDBStreamBatchInfo: DDBStreamBatchInfo{
			ShardID:                         r.awsID,
			StartSequenceNumber:             first.awsSeq,
			EndSequenceNumber:               last.awsSeq,
			ApproximateArrivalOfFirstRecord: first.created.UTC().Format(time.RFC3339),
			ApproximateArrivalOfLastRecord:  last.created.UTC().Format(time.RFC3339),
			BatchSize:                       len(b.records),
			StreamARN:                       m.cfg.StreamARN,
		},
	}
	m.discardedBatches.Add(1)
	m.discardedRecords.Add(int64(len(b.records)))
	line, _ := json.Marshal(rec)
	dest := "none"
	if m.cfg.OnFailure != nil {
		dest = "on-failure destination"
		if err := m.cfg.OnFailure.Send(m.invokeCtx, rec); err != nil {
			m.logger.Error("stream: the on-failure destination refused a discarded batch", "shard", r.id, "error", err.Error())
		}
	}
	m.logger.Error("stream: batch discarded", "shard", r.id, "condition", condition, "records", len(b.records),
		"destination", dest, "record", json.RawMessage(line))
	r.checkpoint(b.end)
}
