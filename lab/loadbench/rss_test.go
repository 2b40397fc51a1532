package loadbench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/transferflow/orchestrator/localaws/samtemplate"
)

func TestParseVmRSS(t *testing.T) {
	tests := []struct {
		name    string
		status  string
		want    int64
		wantErr bool
	}{
		{name: "linux status", status: "Name:\tlocal\nVmPeak:\t  900 kB\nVmRSS:\t  123456 kB\nThreads:\t9\n", want: 123456 * 1024},
		{name: "no line", status: "Name:\tzombie\n", wantErr: true},
		{name: "other unit", status: "VmRSS:\t 12 MB\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseVmRSS([]byte(tt.status))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("parseVmRSS = %d, %v; want %d, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// TestMemoryWatch: samples come at the marked counts, labelled, with this process's memory.
func TestMemoryWatch(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("VmRSS is read from /proc")
	}
	m := &memoryWatch{localPID: os.Getpid()}
	m.sample(labelStart)
	m.mark(3, labelAfter1000)
	m.finished(2)
	m.finished(2)
	m.mark(1, "already passed")
	samples, errs := m.result()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(samples) != 3 || samples[1].Label != labelAfter1000 || samples[1].Transfers != 3 || samples[2].Transfers != 4 || samples[1].LocalMB <= 0 {
		t.Errorf("samples = %+v", samples)
	}
	if samples[0].StoreMB != 0 {
		t.Error("a store pid of 0 was measured")
	}
}

func TestWriteSeed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "seed.json")
	sets := newAccountSets(Scales["quick"], true)
	if err := writeSeed(path, sets.hot, sets.burst); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4+16 || got[0]["accountId"] != "bench-h-000000" || got[0]["currency"] != "EUR" || got[0]["balance"] != float64(seedBalance) {
		t.Errorf("seed = %v", got[:1])
	}
	if len(sets.direct) != 2*Scales["quick"].DirectTransfers*len(Scales["quick"].Cells) {
		t.Errorf("%d direct accounts", len(sets.direct))
	}
	if without := newAccountSets(Scales["quick"], false); without.direct != nil || len(without.many) != len(sets.many) {
		t.Errorf("without a store test: %d direct accounts, %d many; want none, %d", len(without.direct), len(without.many), len(sets.many))
	}
	if err := writeSeed(path); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "[]" {
		t.Errorf("an empty seed is %s, want []", b)
	}
}

func TestFunctionUses(t *testing.T) {
	tmpl, err := samtemplate.Parse([]byte(`
Globals:
  Function:
    MemorySize: 256
    Architectures: [arm64]
Resources:
  Api:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: functions/orchestrator
      Events:
        Post: {Type: Api, Properties: {Path: /transfers, Method: post}}
  Debit:
    Type: AWS::Serverless::Function
    Properties: {CodeUri: functions/debit, MemorySize: 512}
  Reconciler:
    Type: AWS::Serverless::Function
    Properties: {CodeUri: functions/reconciler, Architectures: [x86_64]}
`))
	if err != nil {
		t.Fatal(err)
	}
	fns, err := tmpl.Functions(samtemplate.Env{Region: "us-east-1", AccountID: "1"}, placeholders{})
	if err != nil {
		t.Fatal(err)
	}
	h := histories{n: 2, durations: map[string][]time.Duration{"Debit": {ms(2.2), ms(3), ms(0.4), ms(1)}}}
	got := functionUses(fns, h, ms(3.5))
	if len(got) != 2 {
		t.Fatalf("uses = %+v, want Api and Debit (the reconciler is not invoked)", got)
	}
	api, debit := got[0], got[1]
	if api.Name != "Api" || api.InvocationsPerTransfer != 1 || api.MeanMs != 3.5 || api.BilledMs != 4 || api.MemoryMB != 256 || api.Architecture != "arm64" {
		t.Errorf("api = %+v", api)
	}
	// billed: 3 + 3 + 1 + 1 ms; mean 6.6/4 ms.
	if debit.InvocationsPerTransfer != 2 || debit.MemoryMB != 512 || debit.BilledMs != 2 || debit.MeanMs != 1.65 {
		t.Errorf("debit = %+v", debit)
	}
}
