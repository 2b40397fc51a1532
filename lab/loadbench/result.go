package loadbench

import "time"

// SchemaVersion is the version of the Result JSON; it changes when a field changes meaning.
const SchemaVersion = 1

// Result is everything one run measured, as lab/bench/results/*.json holds it.
type Result struct {
	Schema    int          `json:"schema"`
	StartedAt time.Time    `json:"startedAt"`
	Seconds   float64      `json:"seconds"`
	Scale     Scale        `json:"scale"`
	Build     Build        `json:"build"`
	Closed    []ClosedCell `json:"closedLoop"`
	Burst     Burst        `json:"burst"`
	Open      OpenLoop     `json:"openLoop"`
	DynamoDB  DynamoDBUse  `json:"dynamodb"`
	Workflow  Workflow     `json:"workflow"`
	Store     []StoreCell  `json:"storeLimit"`
	Memory    []RSSSample  `json:"memory"`
	// Engine is nil when the engine comparison was not run or failed (see Notes).
	Engine   *EngineResult `json:"engine,omitempty"`
	Cost     Cost          `json:"cost"`
	Verdicts []Verdict     `json:"verdicts"`
	// Notes are caveats of this run: estimates, skipped parts, anomalies.
	Notes []string `json:"notes,omitempty"`
}

// Build says what was measured, and on what.
type Build struct {
	LocalBin string `json:"localBin"`
	LocalDir string `json:"localDir"`
	// Git is `git describe --always --dirty` of LocalDir, when it is a checkout.
	Git       string `json:"git,omitempty"`
	GoVersion string `json:"goVersion"`
	OS        string `json:"os"`
	CPUs      int    `json:"cpus"`
	// Store is memory or disk.
	Store string `json:"store"`
	// DynamoDB names the server: "dynoxide <version>" or the --dynamodb-endpoint.
	DynamoDB string `json:"dynamodb"`
}

// Outcomes counts how a set of transfers ended. Failed transfers ended FAILED; NotTerminal were still
// IN_PROGRESS at the end; Rejected POSTs were never accepted (the client gave up).
type Outcomes struct {
	Transfers   int `json:"transfers"`
	Completed   int `json:"completed"`
	Failed      int `json:"failed"`
	NotTerminal int `json:"notTerminal"`
	Rejected    int `json:"rejected"`
	// POSTRetries is how many POSTs the client repeated (same key and body) after a temporary error.
	POSTRetries int `json:"postRetries"`
	// FailureCodes counts the failure codes of Failed transfers.
	FailureCodes map[string]int `json:"failureCodes,omitempty"`
}

// Bad is the number of transfers that did not complete: failed, not terminal, or rejected.
func (o Outcomes) Bad() int { return o.Failed + o.NotTerminal + o.Rejected }

// FailureRate is Bad over Transfers.
func (o Outcomes) FailureRate() float64 {
	if o.Transfers == 0 {
		return 0
	}
	return float64(o.Bad()) / float64(o.Transfers)
}

// ClosedCell is one closed-loop cell: clients that wait for each transfer.
type ClosedCell struct {
	// Pass is "many" (random distinct pairs of many accounts) or "hot" (pairs of 4 accounts).
	Pass        string `json:"pass"`
	Accounts    int    `json:"accounts"`
	Concurrency int    `json:"concurrency"`
	Outcomes
	Seconds         float64 `json:"seconds"`
	CompletedPerSec float64 `json:"completedPerSec"`
	FailureRate     float64 `json:"failureRate"`
	// POST is the latency of POST /transfers as the client saw it, retries included.
	POST Latency `json:"post"`
	// EndToEnd is completedAt (updatedAt for a FAILED transfer) minus createdAt, from the transfer resource.
	EndToEnd Latency `json:"endToEnd"`
	// PollsPerTransfer is the mean number of GET /transfers/{id} a client needed.
	PollsPerTransfer float64 `json:"pollsPerTransfer"`
	// CPU is where the machine's CPU went during the cell, per completed transfer (absent when /proc could not be
	// read).
	CPU *CPUShare `json:"cpuPerTransfer,omitempty"`
}

// CPUShare is the CPU time (user and system, from /proc/PID/stat, in 10 ms ticks) the processes of a closed-loop
// cell used from its first POST to its end, per completed transfer, in milliseconds. The kernel's own threads (the
// loopback network's soft interrupts, among others) are counted where the kernel charges them, which is not always
// to these processes.
type CPUShare struct {
	LocalMs float64 `json:"localMs"` // bin/local: the API, the functions and the Step Functions engine
	// StoreMs is the DynamoDB server's; 0 when it is not the bench's to measure (--dynamodb-endpoint).
	StoreMs     float64 `json:"storeMs"`
	GeneratorMs float64 `json:"generatorMs"` // this load generator's (its clients and their polls)
	// Cores is how many cores the three kept busy on average over the cell.
	Cores float64 `json:"cores"`
	// CeilingPerSec is the transfers/s the machine's CPUs could serve at this cost, every core busy with these three
	// and nothing else: what the cell's throughput cannot exceed on this machine without a cheaper transfer.
	CeilingPerSec float64 `json:"ceilingPerSec"`
}

// Burst is the burst without waiting: submission, then the drain of the backlog.
type Burst struct {
	Clients  int `json:"clients"`
	Accounts int `json:"accounts"`
	Outcomes
	// SubmitSeconds is how long the submission took; DrainSeconds runs from the first POST to the last transfer's
	// updatedAt.
	SubmitSeconds   float64 `json:"submitSeconds"`
	DrainSeconds    float64 `json:"drainSeconds"`
	CompletedPerSec float64 `json:"completedPerSec"`
	POST            Latency `json:"post"`
	EndToEnd        Latency `json:"endToEnd"`
}

// OpenLoop is the fixed-rate run at half the peak.
type OpenLoop struct {
	// PeakPerSec is the completed/s of a short closed loop run just before the open loop at PeakConcurrency, the
	// concurrency of the many-accounts pass's highest completed/s (ClosedLoopPeakPerSec); PeakBad counts its
	// failed, rejected or unfinished transfers of PeakTransfers.
	PeakPerSec           float64 `json:"peakPerSec"`
	PeakConcurrency      int     `json:"peakConcurrency"`
	ClosedLoopPeakPerSec float64 `json:"closedLoopPeakPerSec"`
	PeakTransfers        int     `json:"peakTransfers"`
	PeakBad              int     `json:"peakBad"`
	// PeakCPU is where the CPU went in that short closed loop, after everything before it (set with ClosedCell.CPU).
	PeakCPU       *CPUShare `json:"peakCpuPerTransfer,omitempty"`
	OfferedPerSec float64   `json:"offeredPerSec"`
	Outcomes
	CompletedPerSec float64 `json:"completedPerSec"`
	// POST and EndToEnd are measured from each request's scheduled time, so a stall delays the schedule of none.
	POST     Latency `json:"post"`
	EndToEnd Latency `json:"endToEnd"`
	// InFlightMax is the most POSTs outstanding at once.
	InFlightMax int `json:"inFlightMax"`
}

// Phase is the DynamoDB use of one unit of work (a POST, a replay, a workflow), averaged over Samples units.
type Phase struct {
	Samples    int     `json:"samples"`
	Requests   float64 `json:"requests"`
	ReadUnits  float64 `json:"readUnits"`
	WriteUnits float64 `json:"writeUnits"`
	// ByOperation is the requests per unit by operation (PutItem, TransactWriteItems, …).
	ByOperation map[string]float64 `json:"byOperation"`
	// Errors is the error answers per unit by error type (a replay's ConditionalCheckFailedException, say).
	Errors map[string]float64 `json:"errors,omitempty"`
	// Estimated and Unreported are the requests per unit whose capacity was estimated, or is missing.
	Estimated  float64 `json:"estimated,omitempty"`
	Unreported float64 `json:"unreported,omitempty"`
}

// DynamoDBUse is what DynamoDB does per POST, per replay and per transfer in the workflow.
type DynamoDBUse struct {
	NewPOST  Phase `json:"newPost"`
	Replay   Phase `json:"replay"`
	Workflow Phase `json:"workflow"`
	// Transfer is NewPOST and Workflow together: everything one transfer costs.
	Transfer Phase `json:"transfer"`
	// CapacitySource says where the units come from.
	CapacitySource string `json:"capacitySource"`
}

// FunctionUse is one Lambda function's share of a transfer.
type FunctionUse struct {
	Name                   string  `json:"name"`
	InvocationsPerTransfer float64 `json:"invocationsPerTransfer"`
	// MeanMs is the mean measured duration; BilledMs the mean of the durations rounded up to 1 ms, as Lambda bills.
	MeanMs       float64 `json:"meanMs"`
	BilledMs     float64 `json:"billedMs"`
	MemoryMB     int     `json:"memoryMb"`
	Architecture string  `json:"architecture"`
	// Source says where the duration comes from.
	Source string `json:"source"`
}

// Workflow is what one transfer's execution does, from execution histories.
type Workflow struct {
	Samples                int     `json:"samples"`
	TransitionsPerTransfer float64 `json:"transitionsPerTransfer"`
	// LambdaInvocationsPerTransfer counts the workflow's invocations (LambdaFunctionScheduled events and
	// TaskScheduled events of resource type lambda); Functions adds the API's own function.
	LambdaInvocationsPerTransfer float64 `json:"lambdaInvocationsPerTransfer"`
	// EventsPerTransfer counts the outcome events a transfer publishes: the outcome relay's (from the table's
	// stream) and any events:putEvents tasks of the histories (the workflow's, before the outbox); absent from
	// results measured before any event was published.
	EventsPerTransfer float64       `json:"eventsPerTransfer,omitempty"`
	Functions         []FunctionUse `json:"functions"`
}

// StoreCell is the store test at one concurrency, next to the closed loop's figure at the same concurrency.
type StoreCell struct {
	Concurrency int `json:"concurrency"`
	// Transfers is how many transfers' worth of requests were sent; Requests how many requests that made.
	Transfers       int            `json:"transfers"`
	Requests        int            `json:"requests"`
	Seconds         float64        `json:"seconds"`
	RequestsPerSec  float64        `json:"requestsPerSec"`
	TransfersPerSec float64        `json:"transfersPerSec"`
	Errors          map[string]int `json:"errors,omitempty"`
	// StackTransfersPerSec is the many-accounts closed loop's completed/s at this concurrency, whose clients made
	// PollsPerTransfer GET /transfers/{id} per transfer (one GetItem each, also sent here); Efficiency is
	// StackTransfersPerSec × (DynamoDB requests per transfer + PollsPerTransfer) ÷ RequestsPerSec.
	StackTransfersPerSec float64 `json:"stackTransfersPerSec"`
	PollsPerTransfer     float64 `json:"pollsPerTransfer"`
	Efficiency           float64 `json:"efficiency"`
	// Request is the time of one request as this client saw it, from sending it to reading the whole answer, and
	// RequestP999Ms its 99.9th percentile. At c = 1 nothing else is sent to the server, so the tail is the server's
	// own: the floor under the stack's POST p99 on the same machine.
	Request       Latency `json:"request,omitzero"`
	RequestP999Ms float64 `json:"requestP999Ms,omitempty"`
	// StoreCPUMsPerTransfer is the DynamoDB server's CPU time (user and system) during the cell per transfer's worth
	// of requests, polls included; 0 when the server is not a process of this run.
	StoreCPUMsPerTransfer float64 `json:"storeCpuMsPerTransfer,omitempty"`
}

// RSSSample is the resident memory of the stack and of the DynamoDB server after Transfers transfers.
type RSSSample struct {
	Label     string `json:"label"`
	Transfers int64  `json:"transfers"`
	// LocalMB is bin/local's VmRSS; StoreMB the DynamoDB server's (0 when it is not a child of this run).
	LocalMB float64 `json:"localMb"`
	StoreMB float64 `json:"storeMb"`
}

// EngineRow is one definition of the engine comparison.
type EngineRow struct {
	Definition string  `json:"definition"`
	GoPerSec   float64 `json:"goPerSec"`
	NodePerSec float64 `json:"nodePerSec"`
	Ratio      float64 `json:"ratio"`
}

// EngineResult is the engine comparison.
type EngineResult struct {
	Rows               []EngineRow `json:"rows"`
	NodeVersion        string      `json:"nodeVersion"`
	NodePackageVersion string      `json:"nodePackageVersion"`
}

// CostLine is one item of the AWS bill for Cost.Transfers transfers.
type CostLine struct {
	Item string `json:"item"`
	// Quantity is the billed quantity per transfer, in Unit.
	Quantity float64 `json:"quantityPerTransfer"`
	Unit     string  `json:"unit"`
	// Price is the list price as AWS states it, PricePicoUSD the price of one Unit in 10^-12 USD.
	Price        string `json:"price"`
	PricePicoUSD int64  `json:"pricePicoUsd"`
	// Cents is the line's total for Cost.Transfers transfers, in US cents, rounded to the nearest cent.
	Cents int64 `json:"cents"`
	// Source says where Quantity comes from.
	Source string `json:"source"`
}

// Cost is the bill of Transfers transfers in Region at on-demand list prices.
type Cost struct {
	Region     string     `json:"region"`
	Transfers  int64      `json:"transfers"`
	Lines      []CostLine `json:"lines"`
	TotalCents int64      `json:"totalCents"`
	Formula    string     `json:"formula"`
}

// Verdict is one of the performance targets against this run's figure.
type Verdict struct {
	Name   string `json:"name"`
	Target string `json:"target"`
	Figure string `json:"figure"`
	// Status is PASS, FAIL, or SKIP when the run has no figure for it.
	Status string `json:"status"`
}
