package storegrowth

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/transferflow/orchestrator/internal/ddblocal"
	"github.com/transferflow/orchestrator/internal/ledger"
)

// TestSettleInputIsTheCreditsSettlement checks that the settle probe sends, as one UpdateItem, the settlement the
// CREDIT's own transaction applies to the record (ledger.SettleCompleted; the workflow's MarkCompleted state sent it
// alone before), and that its variants differ from it, so that a change to the settlement cannot leave the
// reproduction measuring another request.
func TestSettleInputIsTheCreditsSettlement(t *testing.T) {
	rec := ledger.NewTransferRecord(ledger.Transfer{TransferID: "tr_" + strings.Repeat("a", 42)}, time.Now(), 0)
	in := settleInput("T", rec, time.Now(), settleASL)
	if got := aws.ToString(in.UpdateExpression); got != ledger.SettleCompleted {
		t.Errorf("UpdateExpression = %q, the ledger's settlement is %q", got, ledger.SettleCompleted)
	}
	for _, v := range []int{settleKeepGSI, settleNoTTL} {
		if got := aws.ToString(settleInput("T", rec, time.Now(), v).UpdateExpression); got == ledger.SettleCompleted {
			t.Errorf("variant %d sends the settlement unchanged: %q", v, got)
		}
	}
}

// tokenRecorder is an HTTP client that records, for each TransactWriteItems it sends, whether the body carries a
// ClientRequestToken.
type tokenRecorder struct {
	mu   sync.Mutex
	with int
	bare int
}

func (r *tokenRecorder) Do(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.Header.Get("X-Amz-Target"), ".TransactWriteItems") {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		r.mu.Lock()
		if bytes.Contains(body, []byte(`"ClientRequestToken"`)) {
			r.with++
		} else {
			r.bare++
		}
		r.mu.Unlock()
	}
	return http.DefaultClient.Do(req)
}

// TestRunGrowsAndProbes runs each fill at a tiny scale on Dynoxide and checks what the rows report against the
// table and the wire: the item count against a Scan, and that only the token client's transactions carry a token.
func TestRunGrowsAndProbes(t *testing.T) {
	for _, fill := range []string{FillWorkload, FillPut, FillTokens} {
		t.Run(fill, func(t *testing.T) {
			srv, tables := ddblocal.StartWithTablesT(t)
			table := tables["TransfersTable"]
			tokenRec, plainRec := &tokenRecorder{}, &tokenRecorder{}
			cfg := func(hc aws.HTTPClient) aws.Config {
				return aws.Config{Region: "us-east-1", HTTPClient: hc,
					Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}
			}
			endpoint := func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(srv.URL) }
			tokenDB := dynamodb.NewFromConfig(cfg(tokenRec), endpoint)
			plainDB := NewPlainClient(cfg(plainRec), endpoint)

			const steps, perStep, probe, accounts = 2, 6, 3, 10
			rows, err := Run(context.Background(), Config{Table: table, Fill: fill, Tokens: true, Steps: steps,
				StepTransfers: perStep, Probe: probe, Concurrency: 2, Accounts: accounts}, tokenDB, plainDB)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != steps+1 {
				t.Fatalf("%d rows, want %d", len(rows), steps+1)
			}
			for _, r := range rows {
				for _, p := range Probes {
					if r.PerSec[p] <= 0 {
						t.Errorf("%s: probe %s measured %v per second", r.Label, p, r.PerSec[p])
					}
				}
			}
			last := rows[len(rows)-1]
			if last.Transfers != steps*perStep {
				t.Errorf("last row: %d transfers, want %d", last.Transfers, steps*perStep)
			}
			// The last row's items are those before its probes, which then wrote perProbeRound more.
			out, err := plainDB.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(table), Select: ddbtypes.SelectCount})
			if err != nil {
				t.Fatal(err)
			}
			// Records: put's and the two untimed sets; DEBITs: leg and leg-notoken; the setup's CREDITs and the third
			// set's DEBITs; the mix's record and its two legs.
			perProbeRound := probe * (3 + 2 + 4 + 1 + 2)
			if got, want := int(out.Count), last.Items+perProbeRound; got != want {
				t.Errorf("the table holds %d items, the last row says %d before its probes (+%d by them = %d)", got, last.Items, perProbeRound, want)
			}
			if wantGrowth := map[string]int{FillWorkload: 3, FillPut: 3, FillTokens: 0}[fill]; last.Items-rows[len(rows)-2].Items != perStep*wantGrowth+perProbeRound {
				t.Errorf("a step grew the table by %d items, want %d", last.Items-rows[len(rows)-2].Items, perStep*wantGrowth+perProbeRound)
			}
			if plainRec.with != 0 {
				t.Errorf("the plain client sent %d TransactWriteItems with a ClientRequestToken", plainRec.with)
			}
			if tokenRec.bare != 0 || tokenRec.with == 0 {
				t.Errorf("the token client sent %d TransactWriteItems with a token and %d without", tokenRec.with, tokenRec.bare)
			}
			// The last row counts the tokens before its probes, which send one per leg and check and two per mix.
			if got, want := last.Tokens, tokenRec.with-probe*(1+1+2); got != want {
				t.Errorf("the last row counts %d tokens, the token client sent %d before its probes", got, want)
			}
		})
	}
}
