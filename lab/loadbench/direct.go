package loadbench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/transferflow/orchestrator/internal/ledger"
)

// directScope is the scope the store test derives its transfer ids from, so they never meet the API's.
const directScope = "bench-direct"

// replacement is one identifier of the template and what stands for it in a replayed transfer.
type replacement struct{ old, new string }

// replacements are the identifiers of tpl's transfer mapped to those of another transfer with Idempotency-Key key
// between src and dst: the transfer id (which also appears in the execution ARN and the ledger keys), the record's
// key, the Idempotency-Key and the two accounts. The transfer id comes first: it contains the record key.
func (tpl template) replacements(key, src, dst string) ([]replacement, error) {
	id, err := ledger.NewTransferID(ledger.KeyHash(directScope, key), nil)
	if err != nil {
		return nil, err
	}
	rs := []replacement{{tpl.transferID, id}}
	oldPK, okOld := ledger.RecordKey(tpl.transferID)
	newPK, okNew := ledger.RecordKey(id)
	if okOld && okNew {
		rs = append(rs, replacement{oldPK, newPK})
	}
	return append(rs, replacement{tpl.key, key}, replacement{tpl.source, src}, replacement{tpl.dest, dst}), nil
}

// apply returns body with every replacement made, in order.
func apply(body []byte, rs []replacement) []byte {
	for _, r := range rs {
		body = bytes.ReplaceAll(body, []byte(r.old), []byte(r.new))
	}
	return body
}

// freshToken gives a request that carries a ClientRequestToken (the SDK sets one on every TransactWriteItems) a new
// one: DynamoDB answers a token it has seen with other parameters IdempotentParameterMismatchException. A stack that
// keeps the tokens itself on Dynoxide (localaws/txtokens) sends none, so its template has none to replace; the
// requests of older builds, and of a stack on DynamoDB Local, do.
func freshToken(body []byte) ([]byte, error) {
	if !bytes.Contains(body, []byte(`"ClientRequestToken"`)) {
		return body, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("store test: request body: %w", err)
	}
	if _, ok := m["ClientRequestToken"]; !ok {
		return body, nil
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	h := hex.EncodeToString(b[:])
	m["ClientRequestToken"], _ = json.Marshal(h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:])
	return json.Marshal(m)
}

// directRequest is one request of the store test.
type directRequest struct {
	target string
	body   []byte
}

// directTransfers builds n transfers' worth of requests from tpl, each transfer with a new key and id and its own
// two accounts of accounts (which must have 2n, fresh and seeded like the template's accounts, so that conditions on
// balances and versions hold as they did for the template). polls is the mean number of GET /transfers/{id} a
// waiting client made per transfer in the stack: each is one strongly consistent GetItem of the transfer record, so
// each transfer also gets floor(polls) of them, and one more for a share frac(polls) of the transfers, spread evenly.
func (d *driver) directTransfers(tpl template, accounts []string, n int, polls float64) ([][]directRequest, error) {
	if len(accounts) < 2*n {
		return nil, fmt.Errorf("store test: %d accounts for %d transfers", len(accounts), n)
	}
	table := tpl.table()
	if polls > 0 && table == "" {
		return nil, errors.New("store test: no table name in the template's requests")
	}
	out := make([][]directRequest, n)
	for i := range n {
		rs, err := tpl.replacements(d.key("dirx"), accounts[2*i], accounts[2*i+1])
		if err != nil {
			return nil, err
		}
		reqs := make([]directRequest, len(tpl.requests))
		for j, x := range tpl.requests {
			body, err := freshToken(apply(x.Body, rs))
			if err != nil {
				return nil, err
			}
			reqs[j] = directRequest{target: "DynamoDB_20120810." + x.Operation, body: body}
		}
		gets := int(float64(i+1)*polls) - int(float64(i)*polls)
		pk, _ := ledger.RecordKey(rs[0].new)
		for range gets {
			body, err := json.Marshal(map[string]any{
				"TableName":      table,
				"Key":            map[string]any{"pk": map[string]string{"S": pk}, "sk": map[string]string{"S": "TRANSFER"}},
				"ConsistentRead": true,
			})
			if err != nil {
				return nil, err
			}
			reqs = append(reqs, directRequest{target: "DynamoDB_20120810.GetItem", body: body})
		}
		out[i] = reqs
	}
	return out, nil
}

// table is the table the template's requests name (the first TableName found), or "".
func (tpl template) table() string {
	for _, x := range tpl.requests {
		var m struct{ TableName string }
		if json.Unmarshal(x.Body, &m) == nil && m.TableName != "" {
			return m.TableName
		}
	}
	return ""
}

// direct sends transfers to the DynamoDB endpoint with c workers, each transfer's requests in their order, and
// measures requests per second.
func direct(ctx context.Context, hc *http.Client, endpoint string, transfers [][]directRequest, c int) StoreCell {
	var (
		next   atomic.Int64
		total  atomic.Int64
		mu     sync.Mutex
		errs   = map[string]int{}
		wg     sync.WaitGroup
		date   = time.Now().UTC().Format("20060102T150405Z")
		auth   = "AWS4-HMAC-SHA256 Credential=local/" + date[:8] + "/us-east-1/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=" + strings.Repeat("0", 64)
		start  = time.Now()
		failed = func(kind string) {
			mu.Lock()
			errs[kind]++
			mu.Unlock()
		}
	)
	// Each worker keeps its own requests' times, merged at the end, so that timing adds no lock to the loop.
	times := make([][]time.Duration, c)
	for w := range c {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(transfers) || ctx.Err() != nil {
					return
				}
				for _, r := range transfers[i] {
					total.Add(1)
					sent := time.Now()
					kind := send(ctx, hc, endpoint, auth, date, r)
					times[w] = append(times[w], time.Since(sent))
					if kind != "" {
						failed(kind)
					}
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	n := int(total.Load())
	all := slices.Concat(times...)
	request := Summarize(all) // sorts all
	cell := StoreCell{Concurrency: c, Transfers: len(transfers), Requests: n, Seconds: elapsed.Seconds(),
		RequestsPerSec: perSecond(n, elapsed), TransfersPerSec: perSecond(len(transfers), elapsed),
		Request: request, RequestP999Ms: millis(Percentile(all, 99.9))}
	if len(errs) > 0 {
		cell.Errors = errs
	}
	return cell
}

// send sends one request and returns "" on success, else the error's type.
func send(ctx context.Context, hc *http.Client, endpoint, auth, date string, r directRequest) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(endpoint, "/")+"/", bytes.NewReader(r.body))
	if err != nil {
		return "request"
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", r.target)
	req.Header.Set("X-Amz-Date", date)
	req.Header.Set("Authorization", auth)
	resp, err := hc.Do(req)
	if err != nil {
		return "transport"
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK {
		return ""
	}
	var e struct {
		Type string `json:"__type"`
	}
	_ = json.Unmarshal(b, &e)
	if i := strings.LastIndexByte(e.Type, '#'); i >= 0 {
		return e.Type[i+1:]
	}
	return fmt.Sprintf("HTTP %d", resp.StatusCode)
}
