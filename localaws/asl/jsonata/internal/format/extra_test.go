package format

import (
	"strings"
	"testing"
)

// TestEvaluatorCases: the suite's cases that need the evaluator, with the calls they make done directly (the
// evaluation's instant is testNow, 2018-10-21T13:05:00Z).
func TestEvaluatorCases(t *testing.T) {
	checkCalls(t, []callCase{
		// $toMillis('2018-10-21T13:05:00Z').[$fromMillis(), $fromMillis($, (),'-0500'), $fromMillis($, (),'0000')]
		{"iso default", `$fromMillis($toMillis('2018-10-21T13:05:00Z'))`, `"2018-10-21T13:05:00.000Z"`},
		{"iso in a timezone", `$fromMillis($toMillis('2018-10-21T13:05:00Z'), (), '-0500')`, `"2018-10-21T08:05:00.000-05:00"`},
		{"iso in UTC", `$fromMillis($toMillis('2018-10-21T13:05:00Z'), (), '0000')`, `"2018-10-21T13:05:00.000Z"`},
		// $toMillis('13:45', '[H]:[m]') ~> $fromMillis(): today's date, the time given.
		{"time only is today", `$fromMillis($toMillis('13:45', '[H]:[m]'))`, `"2018-10-21T13:45:00.000Z"`},
		{"month and day are this year", `$fromMillis($toMillis('3-4', '[M]-[D]'))`, `"2018-03-04T00:00:00.000Z"`},
		{"now", `$now()`, `"2018-10-21T13:05:00.000Z"`},
		{"now with a picture", `$now('[D1o] [MNn] [Y]')`, `"21st October 2018"`},
		{"now in a timezone", `$now('[H01]:[m01][Z]', '+0530')`, `"18:35+05:30"`},
		{"millis", `$millis()`, `1540127100000`},
	})
}

// TestDivergences: where JSONata answers NaN, fails with a JavaScript error or never returns, these functions give
// an answer or an error.
func TestDivergences(t *testing.T) {
	checkCalls(t, []callCase{
		// JSONata scales a negative number or zero for an exponent forever.
		{"exponent of zero", `$formatNumber(0, '0.0e0')`, `"0.0e0"`},
		{"exponent of a negative number", `$formatNumber(-12345.678, '0.00e0')`, `"-1.23e4"`},
		// JSONata fails reading the prefix of a picture without digits.
		{"no digit sign", `$formatNumber(12, 'abc')`, `!D3085`},
		{"empty picture", `$formatNumber(12, '')`, `!D3085`},
		{"empty pattern separator", `$formatNumber(12, '', {'pattern-separator': ''})`, `!D3085`},
		{"more than toFixed's digits", `$formatNumber(1, '0.` + strings.Repeat("0", 101) + `')`,
			`!!$formatNumber: a picture with more than 100 fractional digits is not supported`},
		// JSONata writes NaN for each component.
		{"a timezone that is not one", `$fromMillis(0, (), 'garbage')`, `!!$fromMillis: the timezone "garbage" is not ±hhmm`},
		// JavaScript's dates end 8.64e15 ms either side of the epoch; JSONata answers NaN past them.
		{"past the last date", `$fromMillis(8640000000000001)`, `!!` + errRange.Error()},
		{"reading past the last date", `$toMillis('275760-09-14', '[Y]-[M]-[D]')`, `!!` + errRange.Error()},
		{"a year in words past any date", `$toMillis('one trillion trillion', '[Yw]')`, `!!` + errRange.Error()},
		// Date.parse answers NaN for these, which JSONata returns.
		{"month 13", `$toMillis('2018-13-01')`, `!D3110`},
		{"hour 25", `$toMillis('2018-03-27T25:00:00Z')`, `!D3110`},
		{"a repeated group", `$toMillis('2018-03-27-01')`, `!D3110`},
		// JSONata writes a width in full; here widths stop at 1000.
		{"a width above 1000", `$fromMillis(0, '[Y,1001]')`, `!!` + errWidth.Error()},
		{"a width of 1000", `$fromMillis(0, '[Y,1000-4]')`, `"1970"`},
		// The last day of JavaScript's dates still writes, its year cut to four digits as JSONata does ([Y0001]).
		{"the last date", `$fromMillis(8.64e15)`, `"5760-09-13T00:00:00.000Z"`},
		{"the first date", `$fromMillis(-8.64e15)`, `"-1821-04-20T00:00:00.000Z"`},
	})
}

// TestHostile: pictures and numbers built to be expensive give an answer of bounded size or an error, never a panic
// (one that never ended would meet the test binary's timeout; how long they take is BenchmarkHostile's business).
func TestHostile(t *testing.T) {
	for _, expr := range hostileCalls() {
		v, err := call(expr)
		if s, ok := v.(string); err == nil && ok && len(s) > 1<<20 {
			t.Errorf("%.60s…: a result of %d bytes", expr, len(s))
		}
	}
}

// BenchmarkHostile times the calls of TestHostile, all of them per iteration.
func BenchmarkHostile(b *testing.B) {
	calls := hostileCalls()
	for b.Loop() {
		for _, expr := range calls {
			_, _ = call(expr)
		}
	}
}

// hostileCalls are calls built to be expensive: huge pictures, extreme numbers, long texts to parse.
func hostileCalls() []string {
	long := func(s string, n int) string { return strings.Repeat(s, n) }
	return []string{
		`$formatNumber(1e300, '` + long("0", 5000) + `')`,
		`$formatNumber(5e-324, '0.0e` + long("0", 2000) + `')`,
		`$formatNumber(1.7976931348623157e308, '#,##0.00e0')`,
		`$formatNumber(1e21, '` + long("#,", 2000) + `0')`,
		`$formatNumber(123, '` + long("0.", 1000) + `')`,
		`$formatInteger(1.7976931348623157e308, 'w')`,
		`$formatInteger(1.7976931348623157e308, 'a')`,
		`$formatInteger(-1.7976931348623157e308, 'I')`,
		`$formatInteger(1e20, '` + long("0", 5000) + `')`,
		`$parseInteger('` + long("one hundred thousand ", 5000) + `', 'w')`,
		`$parseInteger('` + long("M", 50000) + `', 'I')`,
		`$parseInteger('` + long("z", 50000) + `', 'a')`,
		`$formatBase(1.7976931348623157e308, 3)`,
		`$formatBase(-5e-324, 2)`,
		`$fromMillis(1521801216617, '` + long("[Y,1000][MNn,1000-1000][Yw][FNn][Z0][z]", 200) + `')`,
		`$fromMillis(1521801216617, '` + long("[", 10000) + `')`,
		`$fromMillis(1521801216617, '` + long("]", 10000) + `')`,
		`$fromMillis(1521801216617, '` + long("[[", 10000) + `')`,
		`$toMillis('` + long("1", 10000) + `', '[Y][M][D]')`,
		`$toMillis('` + long("one ", 5000) + `', '[Yw]')`,
		`$toMillis('` + long("2018-", 2000) + `', '` + long("[Y]-", 2000) + `')`,
		`$toMillis('2018-01-01 +99999999999999999999:99', '[Y]-[M]-[D] [Z]')`,
		`$toMillis('` + long("9", 400) + `-01-01', '[Y]-[M]-[D]')`,
	}
}
