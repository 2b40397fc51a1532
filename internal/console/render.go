package console

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"time"
)

// pageNames are the templates under templates/, each drawn inside base.html.
var pageNames = []string{"transfers", "transfer", "accounts", "account", "executions", "execution", "error"}

// parseTemplates parses each page with the base layout.
func (s *Server) parseTemplates() error {
	funcs := template.FuncMap{
		"money":     money,
		"signed":    signedMoney,
		"statusCSS": statusCSS,
		"short":     short,
		"indent":    func(s string) string { return indent([]byte(s)) },
		"deref":     deref,
		"stampp": func(t *time.Time) string {
			if t == nil {
				return ""
			}
			return stamp(*t)
		},
	}
	s.pages = map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(files, "templates/base.html", "templates/"+name+".html")
		if err != nil {
			return fmt.Errorf("console: templates: %w", err)
		}
		s.pages[name] = t
	}
	return nil
}

// exponents are the ISO 4217 minor-unit exponents that are not 2.
var exponents = map[string]int{
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0, "PYG": 0, "RWF": 0, "UGX": 0,
	"UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
	"CLF": 4, "UYW": 4,
}

// money writes integer minor units in the currency's major unit, exactly (no floats): 1250 EUR is "12.50 EUR".
func money(minor int64, currency string) string {
	exp, ok := exponents[currency]
	if !ok {
		exp = 2
	}
	neg := minor < 0
	digits := strconv.FormatUint(absU(minor), 10)
	if exp > 0 {
		for len(digits) <= exp {
			digits = "0" + digits
		}
		digits = digits[:len(digits)-exp] + "." + digits[len(digits)-exp:]
	}
	if neg {
		digits = "−" + digits
	}
	return digits + " " + currency
}

// signedMoney is money with a plus sign on a positive amount.
func signedMoney(minor int64, currency string) string {
	if minor > 0 {
		return "+" + money(minor, currency)
	}
	return money(minor, currency)
}

func absU(v int64) uint64 {
	if v < 0 {
		return uint64(-(v + 1)) + 1
	}
	return uint64(v)
}

// statusCSS is the class of a status badge.
func statusCSS(status string) string {
	switch status {
	case "COMPLETED", "SUCCEEDED":
		return "ok"
	case "FAILED", "TIMED_OUT", "ABORTED":
		return "bad"
	case "IN_PROGRESS", "RUNNING", "PENDING_REDRIVE":
		return "running"
	}
	return "neutral"
}

// short cuts a long text for a table cell; the whole text stays in the cell's title.
func short(s string) string {
	if r := []rune(s); len(r) > 120 {
		return strings.TrimSpace(string(r[:119])) + "…"
	}
	return s
}
