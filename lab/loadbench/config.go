package loadbench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Cell is one closed-loop measurement: Transfers transfers by Concurrency clients.
type Cell struct {
	Concurrency int `json:"concurrency"`
	Transfers   int `json:"transfers"`
}

// Scale is how much a run measures.
type Scale struct {
	Name string `json:"name"`
	// Cells are the closed-loop cells of each pass (many accounts, then hot accounts).
	Cells []Cell `json:"cells"`
	// ManyAccounts and HotAccounts are the accounts of the two passes.
	ManyAccounts int `json:"manyAccounts"`
	HotAccounts  int `json:"hotAccounts"`
	// BurstTransfers are submitted by BurstClients over BurstAccounts accounts without waiting.
	BurstTransfers int `json:"burstTransfers"`
	BurstClients   int `json:"burstClients"`
	BurstAccounts  int `json:"burstAccounts"`
	// OpenLoopSeconds is how long the open loop offers half the peak.
	OpenLoopSeconds float64 `json:"openLoopSeconds"`
	// Attribution is how many quiet transfers the DynamoDB attribution makes, Replays how many replays of each.
	Attribution int `json:"attribution"`
	Replays     int `json:"replays"`
	// HistorySample is how many transfers of the first cell (its last ones) have their execution history read
	// (transitions, invocations, durations).
	HistorySample int `json:"historySample"`
	// DirectTransfers is how many transfers' worth of requests the store test sends at each concurrency.
	DirectTransfers int `json:"directTransfers"`
	// MemoryTransfers are run by MemoryConcurrency closed-loop clients to watch the resident set grow.
	MemoryTransfers   int `json:"memoryTransfers"`
	MemoryConcurrency int `json:"memoryConcurrency"`
	// EngineExecutions and EngineConcurrency size the engine comparison.
	EngineExecutions  int `json:"engineExecutions"`
	EngineConcurrency int `json:"engineConcurrency"`
}

// Scales are the presets of --scale.
var Scales = map[string]Scale{
	"full": {
		Name: "full",
		Cells: []Cell{
			{Concurrency: 1, Transfers: 1000}, {Concurrency: 8, Transfers: 3000},
			{Concurrency: 32, Transfers: 6000}, {Concurrency: 128, Transfers: 10000},
		},
		ManyAccounts: 1000, HotAccounts: 4,
		BurstTransfers: 5000, BurstClients: 32, BurstAccounts: 16,
		OpenLoopSeconds: 30,
		Attribution:     5, Replays: 5, HistorySample: 50,
		DirectTransfers: 1000,
		MemoryTransfers: 100000, MemoryConcurrency: 32,
		EngineExecutions: 10000, EngineConcurrency: 32,
	},
	// compare is the closed loop at c = 32 only, 3,000 transfers per pass: two builds side by side in minutes
	// (run it with --only closed).
	"compare": small("compare", 1000, 200, Cell{Concurrency: 32, Transfers: 3000}),
	// contention is the closed loop at c = 32 over only 16 seeded accounts (3,000 transfers), and the 4 hot accounts:
	// transfers that contend for the same items, two builds side by side (run it with --only closed). Its store test
	// sends as many transfers' requests over the same accounts: with --only store, the store's own limit in the
	// comparison's conditions.
	"contention": small("contention", 16, 3000, Cell{Concurrency: 32, Transfers: 3000}),
	// peak is the full run's closed-loop cells around the peak (c = 8 and 32, as many transfers as in full) with
	// their store test: the efficiency at the peak in a few minutes (run it with --only closed,store).
	"peak": small("peak", 1000, 1000, Cell{Concurrency: 8, Transfers: 3000}, Cell{Concurrency: 32, Transfers: 6000}),
	"quick": small("quick", 1000, 200, Cell{Concurrency: 1, Transfers: 50}, Cell{Concurrency: 8, Transfers: 100},
		Cell{Concurrency: 32, Transfers: 150}, Cell{Concurrency: 128, Transfers: 256}),
}

// small is a scale of minutes: the given closed-loop cells over many accounts (and the 4 hot ones), direct
// transfers per store test, and everything else small.
func small(name string, many, direct int, cells ...Cell) Scale {
	return Scale{
		Name: name, Cells: cells,
		ManyAccounts: many, HotAccounts: 4,
		BurstTransfers: 500, BurstClients: 32, BurstAccounts: 16,
		OpenLoopSeconds: 3,
		Attribution:     3, Replays: 3, HistorySample: 20,
		DirectTransfers: direct,
		MemoryTransfers: 1500, MemoryConcurrency: 32,
		EngineExecutions: 500, EngineConcurrency: 8,
	}
}

// EngineFunc measures executions per second of the project's Step Functions engine against the npm engine
// aws-local-stepfunctions (package enginebench). nodeDir is where the npm engine is installed ("" for its default).
type EngineFunc func(ctx context.Context, executions, concurrency int, nodeDir string) (EngineResult, error)

// Config is a run's configuration.
type Config struct {
	// LocalBin is the local stack's binary; empty builds ./cmd/local of LocalDir to a temporary file.
	LocalBin string
	// LocalDir is the directory the stack runs in (template.yaml, statemachine/), and the source built when
	// LocalBin is empty.
	LocalDir string
	// DynamoDBEndpoint, when set, is the DynamoDB server the proxy forwards to (a fresh DynamoDB Local, say);
	// otherwise the run starts its own Dynoxide.
	DynamoDBEndpoint string
	// Disk keeps the store on disk (a temporary --data-dir for the stack, a SQLite file for Dynoxide) instead of in
	// memory.
	Disk bool
	// IndexStreams is given to the Dynoxide the run starts (ddbserver.Options.IndexStreams): cmd/bench passes
	// streamindex.Apply, as cmd/local does for its own.
	IndexStreams func(ctx context.Context, dbPath string) error
	Scale        Scale
	// NodeDir is passed to Engine.
	NodeDir string
	// Engine, when set, measures the engine; nil leaves the engine row out.
	Engine EngineFunc
	// Progress receives one line per step; nil discards them.
	Progress io.Writer
	// StackLog receives the stack's own logs; nil discards them.
	StackLog io.Writer
	// StackArgs are flags added to the measured stack's command line (not the attribution stack's), such as
	// --pprof-addr to profile it during the run.
	StackArgs []string
	// Only, when not empty, limits the run to these sections (Sections); the DynamoDB attribution always runs.
	Only map[string]bool
}

// Sections are the parts of a run that --only can select.
var Sections = []string{"closed", "burst", "open", "store", "engine", "memory"}

// wants reports whether the run measures section.
func (c Config) wants(section string) bool { return len(c.Only) == 0 || c.Only[section] }

// ParseOnly reads a comma-separated list of Sections; "" selects them all.
func ParseOnly(list string) (map[string]bool, error) {
	if list == "" {
		return nil, nil
	}
	only := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if !slices.Contains(Sections, name) {
			return nil, fmt.Errorf("section %q: want some of %s", name, strings.Join(Sections, ","))
		}
		only[name] = true
	}
	return only, nil
}

// ScaleByName returns the preset named name.
func ScaleByName(name string) (Scale, error) {
	s, ok := Scales[name]
	if !ok {
		return Scale{}, fmt.Errorf("scale %q: want quick, compare or full", name)
	}
	return s, nil
}
