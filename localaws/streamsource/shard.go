package streamsource

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// shardsInterval is how often the stream's shards are listed while none is being read (a stream that has none yet).
// Once one is, they are listed again only when a shard is read to its end: AWS closes a shard when it makes its
// children (every few hours, or when a partition splits), so that is when there are new ones to list. Not on a
// timer besides: DescribeStream is the one stream call whose cost grows with the stream in Dynoxide (it takes the
// first and last sequence number of each shard over every record the shard holds: 47 ms with 200,000 records even
// with the stack's indexes), and the server answers nothing else while it runs.
var shardsInterval = 10 * time.Second // a variable for the tests

// maxGetRecords is the most records a GetRecords call returns.
const maxGetRecords = 1000

// shards reads every shard of the stream, each in a goroutine of its own, a child once its parent is read to its
// end (or is no longer listed), until Stop.
func (m *Mapping) shards() {
	type state struct {
		parent        string
		started, done bool
	}
	known := map[string]*state{}
	finished := make(chan string)
	var workers sync.WaitGroup
	defer workers.Wait()
	pause := m.cfg.RetryPause
	for {
		list, err := m.describe()
		if err != nil {
			if m.stopping() {
				return
			}
			m.logger.Warn("stream: describe stream failed; retrying", "error", err.Error(), "retryIn", pause.String())
			if !m.sleep(pause) {
				return
			}
			pause = min(2*pause, m.cfg.MaxRetryPause)
			continue
		}
		pause = m.cfg.RetryPause
		listed := map[string]bool{}
		for _, sh := range list {
			id := aws.ToString(sh.ShardId)
			listed[id] = true
			if known[id] == nil {
				known[id] = &state{parent: aws.ToString(sh.ParentShardId)}
			}
		}
		for id, st := range known {
			if st.started || !listed[id] {
				continue
			}
			if p, ok := known[st.parent]; st.parent != "" && ok && listed[st.parent] && !p.done {
				continue
			}
			st.started = true
			workers.Add(1)
			go func() {
				defer workers.Done()
				if m.readShard(id) {
					select {
					case finished <- id:
					case <-m.stop:
					}
				}
			}()
		}
		reading := false
		for _, st := range known {
			reading = reading || st.started && !st.done
		}
		var relist <-chan time.Time // nil, never ready, while a shard is being read
		var t *time.Timer
		if !reading {
			t = time.NewTimer(shardsInterval)
			relist = t.C
		}
		select {
		case id := <-finished:
			known[id].done = true
		case <-relist:
		case <-m.stop:
		}
		if t != nil {
			t.Stop()
		}
		if m.stopping() {
			return
		}
	}
}

// describe lists the stream's shards.
func (m *Mapping) describe() ([]types.Shard, error) {
	ctx, cancel := m.pollCtx()
	defer cancel()
	in := &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(m.serverStream)}
	var out []types.Shard
	for {
		d, err := m.cfg.Streams.DescribeStream(ctx, in)
		if err != nil {
			return nil, err
		}
		out = append(out, d.StreamDescription.Shards...)
		if d.StreamDescription.LastEvaluatedShardId == nil {
			return out, nil
		}
		in.ExclusiveStartShardId = d.StreamDescription.LastEvaluatedShardId
	}
}

// record is a stream record read from a shard and not yet handled.
type record struct {
	seq     string // the server's sequence number
	prev    string // the server's sequence number of the record read before it in the shard ("" for none)
	awsSeq  string // its sequence number as delivered
	created time.Time
	matched bool   // it passed the filters
	body    []byte // the record as delivered (matched records only)
}

// shardReader reads one shard in order and hands its batches to the mapping.
type shardReader struct {
	m           *Mapping
	id, awsID   string
	iterator    *string
	lastRead    string // the server's sequence number of the last record read ("" for none)
	pending     []*record
	matched     int       // how many of pending passed the filters
	gatherStart time.Time // when the batch being gathered got its first record
	ended       bool      // the shard is closed and was read to its end
	pause       time.Duration
}

// readShard reads shard until Stop or, for a closed shard, its end; it reports whether it got to the end.
func (m *Mapping) readShard(id string) bool {
	r := &shardReader{m: m, id: id, awsID: AWSShardID(id), lastRead: m.ckpt.get(id), pause: m.cfg.RetryPause}
	defer m.setOldest(id, time.Time{})
	m.logger.Debug("stream: reading shard", "shard", id, "after", r.lastRead)
	for !m.stopping() {
		n, err := r.poll()
		if err != nil {
			if m.stopping() {
				return false
			}
			m.logger.Warn("stream: reading the shard failed; retrying", "shard", id, "error", err.Error(), "retryIn", r.pause.String())
			if !m.sleep(r.pause) {
				return false
			}
			r.pause = min(2*r.pause, m.cfg.MaxRetryPause)
			continue
		}
		r.pause = m.cfg.RetryPause
		if !r.dispatch(n) {
			return false
		}
		r.updateOldest()
		if r.ended && len(r.pending) == 0 {
			m.logger.Debug("stream: shard read to its end", "shard", id)
			return true
		}
		if n == maxGetRecords {
			continue // a full page: more are waiting
		}
		// Lambda polls a shard about four times a second, and DynamoDB Streams serves a shard at most five
		// GetRecords a second: a poll that read what there was waits its interval, or for the end of the batching
		// window when that comes first, however busy the table is. (Polling again at once after any record read made
		// a busy stack's poller a loop that cost more CPU than the transfers whose records it read.)
		wait := m.cfg.PollInterval
		if r.gathering() {
			wait = min(wait, m.cfg.MaximumBatchingWindow-time.Since(r.gatherStart))
		}
		if wait > 0 && !m.sleep(wait) {
			return false
		}
	}
	return false
}

// poll reads the next records of the shard into pending and returns how many it read.
func (r *shardReader) poll() (int, error) {
	if r.ended {
		return 0, nil
	}
	m := r.m
	ctx, cancel := m.pollCtx()
	defer cancel()
	if r.iterator == nil {
		it, err := r.newIterator(ctx)
		if err != nil {
			return 0, err
		}
		r.iterator = it
	}
	out, err := m.cfg.Streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: r.iterator, Limit: aws.Int32(maxGetRecords)})
	if err != nil {
		r.iterator = nil // the next poll starts again after the last record read
		return 0, err
	}
	var read, filtered int64
	for _, rec := range out.Records {
		lr, err := normalize(rec, m.cfg.Region, m.cfg.StreamARN, m.serverStream, r.id)
		if err != nil {
			r.iterator = nil
			return 0, err
		}
		matched := m.matches(&lr)
		var body []byte
		if matched {
			if body, err = json.Marshal(lr); err != nil {
				r.iterator = nil
				return 0, err
			}
		}
		p := &record{seq: aws.ToString(rec.Dynamodb.SequenceNumber), prev: r.lastRead, awsSeq: lr.DynamoDB.SequenceNumber, matched: matched}
		if t := rec.Dynamodb.ApproximateCreationDateTime; t != nil {
			p.created = *t
		}
		read++
		if matched {
			p.body = body
			if r.matched == 0 {
				r.gatherStart = time.Now()
			}
			r.matched++
		} else {
			filtered++
		}
		r.pending = append(r.pending, p)
		r.lastRead = p.seq
	}
	// The iterator age first, so that a caller who sees the records counted sees their age.
	r.updateOldest()
	m.read.Add(read)
	m.filtered.Add(filtered)
	r.iterator = out.NextShardIterator
	if r.iterator == nil {
		r.ended = true
	}
	return len(out.Records), nil
}

// newIterator returns an iterator after the last record read, else at the starting position.
func (r *shardReader) newIterator(ctx context.Context) (*string, error) {
	m := r.m
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(m.serverStream), ShardId: aws.String(r.id),
		ShardIteratorType: types.ShardIteratorType(m.cfg.StartingPosition)}
	if r.lastRead != "" {
		in.ShardIteratorType, in.SequenceNumber = types.ShardIteratorTypeAfterSequenceNumber, aws.String(r.lastRead)
	}
	out, err := m.cfg.Streams.GetShardIterator(ctx, in)
	var trimmed *types.TrimmedDataAccessException
	if errors.As(err, &trimmed) && r.lastRead != "" {
		m.logger.Warn("stream: the records after the checkpoint were trimmed; reading from the oldest one", "shard", r.id, "after", r.lastRead)
		in.ShardIteratorType, in.SequenceNumber = types.ShardIteratorTypeTrimHorizon, nil
		out, err = m.cfg.Streams.GetShardIterator(ctx, in)
	}
	if err != nil {
		return nil, err
	}
	return out.ShardIterator, nil
}

// matches reports whether a record passes the filters: any of them, or every record when there are none.
func (m *Mapping) matches(r *lambdaRecord) bool {
	if len(m.cfg.Filters) == 0 {
		return true
	}
	ev := r.filterView()
	for _, f := range m.cfg.Filters {
		if f.Match(ev) {
			return true
		}
	}
	return false
}

// gathering reports whether a batch is being gathered: it has records, is not full and its window is open.
func (r *shardReader) gathering() bool {
	w := r.m.cfg.MaximumBatchingWindow
	n := r.matched
	return w > 0 && n > 0 && n < r.m.cfg.BatchSize && !r.ended && time.Since(r.gatherStart) < w
}

// dispatch hands the pending records to the function in batches: every full batch, and the last one unless it
// is still being gathered. Records that match no filter are checkpointed with the batch they are in, or on their
// own. It reports false when the mapping stopped.
func (r *shardReader) dispatch(polled int) bool {
	for {
		if r.matched == 0 {
			if len(r.pending) > 0 {
				seq := r.pending[len(r.pending)-1].seq
				if err := r.m.ckpt.advance(r.id, seq); err != nil {
					r.m.logger.Error("stream: checkpoint failed", "shard", r.id, "sequenceNumber", seq, "error", err.Error())
				}
				r.pending = nil
			}
			return true
		}
		if r.gathering() {
			return true
		}
		b := r.take()
		if !r.m.handle(r, b) {
			return false
		}
		if r.matched > 0 {
			// The next window starts when the invocation ends.
			r.gatherStart = time.Now()
		}
	}
}

// take removes the next batch from pending: up to BatchSize matching records, with the records that match no
// filter among and after them.
func (r *shardReader) take() *batch {
	b := &batch{}
	i := 0
	for ; i < len(r.pending); i++ {
		p := r.pending[i]
		if p.matched {
			if len(b.records) == r.m.cfg.BatchSize {
				break
			}
			b.records = append(b.records, p)
		}
		b.end = p.seq
	}
	r.pending = r.pending[i:]
	r.matched -= len(b.records)
	return b
}

// checkpoint records seq as the shard's last handled record.
func (r *shardReader) checkpoint(seq string) {
	if seq == "" {
		return
	}
	if err := r.m.ckpt.set(r.id, seq); err != nil {
		r.m.logger.Error("stream: checkpoint failed", "shard", r.id, "sequenceNumber", seq, "error", err.Error())
	}
}

// updateOldest tells the mapping how old the shard's oldest record not handled is.
func (r *shardReader) updateOldest() {
	if len(r.pending) == 0 {
		r.m.setOldest(r.id, time.Time{})
		return
	}
	r.m.setOldest(r.id, r.pending[0].created)
}
