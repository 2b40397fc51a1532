package loadbench

import (
	"fmt"
	"math"
	"sort"
)

// List prices in us-east-1 (on-demand, first pricing tier, no free tier), in 10^-12 USD per unit so that the
// arithmetic stays in integers until the final rounding to cents. Sources: the AWS pricing pages of Step Functions
// (Standard workflows), Lambda, DynamoDB (on-demand, after the November 2024 price cut) and API Gateway (REST APIs).
const (
	picoPerCent = 10_000_000_000

	// PriceTransitionPico is $0.025 per 1,000 state transitions (Standard workflows).
	PriceTransitionPico = 25_000_000
	// PriceLambdaRequestPico is $0.20 per 1M requests.
	PriceLambdaRequestPico = 200_000
	// PriceLambdaGBSecondArmPico is $0.0000133334 per GB-second on arm64 (first 7.5 billion GB-s a month).
	PriceLambdaGBSecondArmPico = 13_333_400
	// PriceLambdaGBSecondX86Pico is $0.0000166667 per GB-second on x86_64 (first 6 billion GB-s a month).
	PriceLambdaGBSecondX86Pico = 16_666_700
	// PriceWriteUnitPico is $0.625 per million write request units (on-demand).
	PriceWriteUnitPico = 625_000
	// PriceReadUnitPico is $0.125 per million read request units (on-demand).
	PriceReadUnitPico = 125_000
	// PriceRESTRequestPico is $3.50 per million REST API calls (first 333 million a month).
	PriceRESTRequestPico = 3_500_000
	// PriceCustomEventPico is $1.00 per million custom events published to an event bus (PutEvents; each 64 KB
	// chunk of an entry is one event, and an outcome event is well under 64 KB). The rule's delivery to CloudWatch
	// Logs is not charged by EventBridge; the log group's ingestion and storage are CloudWatch Logs' (not included).
	PriceCustomEventPico = 1_000_000
)

// CostRegion is the region the prices are for.
const CostRegion = "us-east-1"

// CostFormula explains Cost in one sentence, printed with the table.
const CostFormula = "cost = Σ quantity per transfer × transfers × list price (us-east-1, on-demand, first tier, no free tier); " +
	"Lambda GB-s = invocations × billed ms (rounded up to 1 ms) ÷ 1000 × MemorySize MB ÷ 1024; client polls, replays and the reconciler's sweep are not included"

// CostInputs are the per-transfer quantities the bill is made of.
type CostInputs struct {
	// Transfers is how many transfers to price.
	Transfers              int64
	TransitionsPerTransfer float64
	// Functions are the Lambda functions a transfer invokes, with their durations, memory and architecture.
	Functions             []FunctionUse
	WriteUnitsPerTransfer float64
	ReadUnitsPerTransfer  float64
	// APIRequestsPerTransfer is the REST API calls a transfer takes (the POST).
	APIRequestsPerTransfer float64
	// EventsPerTransfer is the custom events a transfer publishes to EventBridge (its outcome event).
	EventsPerTransfer float64
	// Sources name where each quantity comes from, by item.
	TransitionsSource, DynamoDBSource string
}

// ComputeCost prices in.Transfers transfers.
func ComputeCost(in CostInputs) Cost {
	c := Cost{Region: CostRegion, Transfers: in.Transfers, Formula: CostFormula}
	line := func(item string, qty float64, unit, price string, pico int64, source string) {
		cents := int64(math.Round(qty * float64(in.Transfers) * float64(pico) / picoPerCent))
		c.Lines = append(c.Lines, CostLine{Item: item, Quantity: qty, Unit: unit, Price: price, PricePicoUSD: pico, Cents: cents, Source: source})
		c.TotalCents += cents
	}
	line("Step Functions state transitions", in.TransitionsPerTransfer, "transition", "$0.025 per 1,000", PriceTransitionPico, in.TransitionsSource)

	var requests float64
	gbs := map[string]float64{}
	var names []string
	for _, f := range in.Functions {
		requests += f.InvocationsPerTransfer
		mem := f.MemoryMB
		if mem == 0 {
			mem = 128 // Lambda's default
		}
		gbs[armOrX86(f.Architecture)] += f.InvocationsPerTransfer * f.BilledMs / 1000 * float64(mem) / 1024
		names = append(names, f.Name)
	}
	sort.Strings(names)
	line("Lambda requests", requests, "request", "$0.20 per 1M", PriceLambdaRequestPico, fmt.Sprintf("invocations of %v", names))
	for _, arch := range []string{"arm64", "x86_64"} {
		if q, ok := gbs[arch]; ok {
			p, text := int64(PriceLambdaGBSecondArmPico), "$0.0000133334 per GB-s"
			if arch == "x86_64" {
				p, text = PriceLambdaGBSecondX86Pico, "$0.0000166667 per GB-s"
			}
			line("Lambda duration ("+arch+")", q, "GB-s", text, p, "durations × template MemorySize (see functions)")
		}
	}
	line("DynamoDB write request units", in.WriteUnitsPerTransfer, "WRU", "$0.625 per 1M", PriceWriteUnitPico, in.DynamoDBSource)
	line("DynamoDB read request units", in.ReadUnitsPerTransfer, "RRU", "$0.125 per 1M", PriceReadUnitPico, in.DynamoDBSource)
	line("API Gateway REST requests", in.APIRequestsPerTransfer, "request", "$3.50 per 1M", PriceRESTRequestPico, "POST /transfers")
	if in.EventsPerTransfer > 0 {
		line("EventBridge custom events", in.EventsPerTransfer, "event", "$1.00 per 1M", PriceCustomEventPico,
			"the outcome event: the relay's published events (and any events:putEvents tasks of the histories)")
	}
	return c
}

// armOrX86 names the price list of an architecture: arm64, else x86_64 (Lambda's default).
func armOrX86(arch string) string {
	if arch == "arm64" {
		return "arm64"
	}
	return "x86_64"
}

// FormatCents renders an amount in US cents as dollars: 123456 is "$1,234.56".
func FormatCents(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s$%s.%02d", sign, groupThousands(cents/100), cents%100)
}

// groupThousands renders n with commas between groups of three digits.
func groupThousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
