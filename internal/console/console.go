// Package console is the audit console: web pages that show transfers, their workflow and their money, read only
// through the transfer API (with the caller's rights: a client its own accounts and transfers, an operator any) and
// the Step Functions API. The local stack serves it, and `transferctl console` serves it against any endpoint the CLI
// reaches, a deployed stack included. Pages are rendered on the server from embedded templates; a small embedded
// script refreshes a page that can still change (a running transfer, the first page of a listing) without a reload.
package console

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/transferflow/orchestrator/internal/console/diagram"
	"github.com/transferflow/orchestrator/internal/transferclient"
)

//go:embed templates/*.html assets/*
var files embed.FS

// transferAPI is the part of the transfer API the console reads; *transferclient.Client is one.
type transferAPI interface {
	Get(ctx context.Context, transferID string) (transferclient.Transfer, error)
	History(ctx context.Context, transferID string) (transferclient.History, error)
	Account(ctx context.Context, accountID string) (transferclient.Account, error)
	AccountTransfers(ctx context.Context, accountID string, limit int, nextToken string) (transferclient.AccountTransfers, error)
}

// stepFunctions is the part of the Step Functions API the console reads; *sfn.Client is one.
type stepFunctions interface {
	ListStateMachines(ctx context.Context, in *sfn.ListStateMachinesInput, opts ...func(*sfn.Options)) (*sfn.ListStateMachinesOutput, error)
	ListExecutions(ctx context.Context, in *sfn.ListExecutionsInput, opts ...func(*sfn.Options)) (*sfn.ListExecutionsOutput, error)
	DescribeExecution(ctx context.Context, in *sfn.DescribeExecutionInput, opts ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error)
	DescribeStateMachineForExecution(ctx context.Context, in *sfn.DescribeStateMachineForExecutionInput, opts ...func(*sfn.Options)) (*sfn.DescribeStateMachineForExecutionOutput, error)
	GetExecutionHistory(ctx context.Context, in *sfn.GetExecutionHistoryInput, opts ...func(*sfn.Options)) (*sfn.GetExecutionHistoryOutput, error)
}

// Config is what a Server reads from.
type Config struct {
	// API is the transfer API with the caller's credentials: a *transferclient.Client.
	API transferAPI
	// Operator says that API reads the operator routes (transferclient.Client.Operator): any account and transfer,
	// and accounts' owners and floors.
	Operator bool
	// SFN is the Step Functions API with the same caller's credentials; nil leaves out the drawing and the
	// listings of executions.
	SFN stepFunctions
	// StateMachineArn is the transfer workflow's state machine, whose executions the transfers page lists; empty
	// means the first state machine whose name contains "Transfer".
	StateMachineArn string
	// Logger receives one line per failed page; nil discards.
	Logger *slog.Logger
}

// Server serves the console's pages. It is an http.Handler.
type Server struct {
	api    transferAPI
	sfn    stepFunctions
	smArn  string
	log    *slog.Logger
	pages  map[string]*template.Template
	mux    *http.ServeMux
	layout sync.Map // definition text -> *diagram.Layout: a definition is laid out once
	// operator is the API client's view: operator routes read any account and transfer.
	operator bool

	// smMu guards smArn while the transfer workflow is looked up (stateMachine).
	smMu sync.Mutex
	// settled keeps the listing's settled transfers (they never change).
	settled settledCache
}

// New returns the console for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.API == nil {
		return nil, errors.New("console: no transfer API client")
	}
	s := &Server{api: cfg.API, sfn: cfg.SFN, smArn: cfg.StateMachineArn, log: cfg.Logger, operator: cfg.Operator}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if err := s.parseTemplates(); err != nil {
		return nil, err
	}
	assets, err := fs.Sub(files, "assets")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /assets/", cacheable(http.StripPrefix("/assets/", http.FileServerFS(assets))))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/transfers", http.StatusFound)
	})
	mux.HandleFunc("GET /transfers", s.transfers)
	mux.HandleFunc("GET /transfers/{id}", s.transfer)
	mux.HandleFunc("GET /accounts", s.accountLookup)
	mux.HandleFunc("GET /accounts/{id}", s.account)
	mux.HandleFunc("GET /executions", s.executions)
	mux.HandleFunc("GET /execution", s.execution)
	s.mux = mux
	return s, nil
}

// ServeHTTP serves a page. Every answer carries headers that keep the pages out of frames and other origins. A
// request whose Host is a name other than localhost is refused (421): the console reads with its starter's
// credentials, and a web page elsewhere could otherwise point a name it controls at 127.0.0.1 (DNS rebinding) and
// read the console from the starter's own browser. Open it by its IP address or as localhost.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !trustedHost(r.Host) {
		http.Error(w, "open the console by its address (an IP address or localhost), not by another name", http.StatusMisdirectedRequest)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	s.mux.ServeHTTP(w, r)
}

// cacheable lets the browser keep the embedded assets for an hour.
func cacheable(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		h.ServeHTTP(w, r)
	})
}

// fragment reports whether the page's script asked for the live part of the page only.
func fragment(r *http.Request) bool { return r.Header.Get("X-Console-Fragment") == "1" }

// render writes the page, or only its live part for the page's script.
func (s *Server) render(w http.ResponseWriter, r *http.Request, page string, data any) {
	t := s.pages[page]
	name := "page"
	if fragment(r) {
		name = "live"
	}
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, name, data); err != nil {
		s.log.Error("render", "page", page, "err", err)
		http.Error(w, "the page could not be drawn", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(b.String()))
}

// fail shows an error page: the API's own status for a problem it answered (a 404 stays a 404), else 502.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, what string, err error) {
	status := http.StatusBadGateway
	var apiErr *transferclient.APIError
	if errors.As(err, &apiErr) && apiErr.Status >= 400 && apiErr.Status < 500 {
		status = apiErr.Status
	}
	s.log.Warn("page failed", "path", r.URL.Path, "what", what, "err", err)
	w.WriteHeader(status)
	s.render(w, r, "error", errorPage{Title: what, Status: status, Message: describe(err)})
}

// describe is an error as a person reads it.
func describe(err error) string {
	var apiErr *transferclient.APIError
	if errors.As(err, &apiErr) {
		if apiErr.Detail != "" {
			return fmt.Sprintf("%s (%d %s)", apiErr.Detail, apiErr.Status, apiErr.Code)
		}
		return fmt.Sprintf("%d %s", apiErr.Status, apiErr.Code)
	}
	return err.Error()
}

// layoutOf lays a definition out once and keeps it: executions of one version share the drawing.
func (s *Server) layoutOf(definition string) (*diagram.Layout, error) {
	if l, ok := s.layout.Load(definition); ok {
		return l.(*diagram.Layout), nil
	}
	g, err := diagram.Parse([]byte(definition))
	if err != nil {
		return nil, err
	}
	l := g.Layout()
	s.layout.Store(definition, l)
	return l, nil
}

// drawing is the SVG of the execution's definition with its path marked, or why there is none.
func (s *Server) drawing(ctx context.Context, executionArn string, p path) (template.HTML, string) {
	if s.sfn == nil {
		return "", "no Step Functions client: the drawing needs states:DescribeStateMachineForExecution"
	}
	if executionArn == "" {
		return "", "the workflow has not started"
	}
	out, err := s.sfn.DescribeStateMachineForExecution(ctx, &sfn.DescribeStateMachineForExecutionInput{ExecutionArn: &executionArn})
	if err != nil {
		return "", "the definition could not be read: " + err.Error()
	}
	l, err := s.layoutOf(deref(out.Definition))
	if err != nil {
		return "", "the definition could not be drawn: " + err.Error()
	}
	m := diagram.Marks{Visited: p.Visited, Edges: p.Edges, Current: p.Current, Retried: p.Retried, Caught: p.Caught}
	if p.Failed != "" {
		m.Failed = map[string]bool{p.Failed: true}
	}
	return template.HTML(l.SVG(m)), "" // #nosec G203 -- the diagram package escapes every name it writes
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// trustedHost reports whether a request's Host header names the console by an IP address or as localhost.
func trustedHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if net.ParseIP(host) != nil {
		return true
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}
