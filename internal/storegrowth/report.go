package storegrowth

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// latencyProbes are the probes whose mean latency Write prints.
var latencyProbes = []string{ProbeLeg, ProbeLegNoToken, ProbeCheck, ProbeCheckNoToken}

// Write prints rows as a table: one line per row, the probes' operations per second in the order of Probes, then the
// mean latency in milliseconds of the paired probes (the transactions with and without a ClientRequestToken).
func Write(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"row", "transfers", "items", "tokens/10min", "fill req/s", "RSS MiB"}
	head = append(head, Probes...)
	for _, p := range latencyProbes {
		head = append(head, p+" ms")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, r := range rows {
		cells := []string{r.Label, fmt.Sprint(r.Transfers), fmt.Sprint(r.Items), fmt.Sprint(r.Tokens),
			fmt.Sprintf("%.0f", r.FillPerSec), fmt.Sprintf("%.1f", r.RSSMB)}
		for _, p := range Probes {
			cells = append(cells, fmt.Sprintf("%.0f", r.PerSec[p]))
		}
		for _, p := range latencyProbes {
			cells = append(cells, fmt.Sprintf("%.2f", r.MeanMs[p]))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}
