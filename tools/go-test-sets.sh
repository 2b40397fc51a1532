#!/usr/bin/env bash
# go-test-sets.sh BUILDFLAGS...: every test package of the module, compiled and run, its events printed as
# `go test -json` prints them (make test runs it under gotestsum; Makefile, test-go, says which packages and why).
#
# The packages are in two sets: NORACE_PKGS (relative package paths) without the race detector, every other package
# with $RACE (-race, or empty where there is no C compiler). Each set's test binaries are compiled with `go test -c`
# into $TEST_BIN_DIR (default bin/test), which keeps them: go relinks a binary only when something in it changed, as
# `go build -o` does, where `go test` links every test binary anew on every run (about 40 s of CPU time for the ~50
# packages, a third of a warm make test on two cores). Then the binaries run, JOBS at a time (default the number of
# CPUs), each in its package's folder as go test runs it, through test2json (`go tool test2json`); FIRST_PKGS
# (relative paths) are started before the others. A package's events are printed whole when its binary exits, so
# that packages never interleave. The exit status is non-zero when a set failed to compile (then nothing runs: a binary left from an
# earlier build must not stand in for one that no longer compiles) or a package failed. GO is the go command (default
# go); TEST_TIMEOUT is each binary's -test.timeout (default 12m).
set -uo pipefail

go=${GO:-go}
race=${RACE:-}
bin=${TEST_BIN_DIR:-bin/test}
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac # the binaries run in their packages' folders
jobs=${JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
timeout=${TEST_TIMEOUT:-12m}
read -r -a norace_dirs <<<"${NORACE_PKGS:-}"
read -r -a first_dirs <<<"${FIRST_PKGS:-}"

# The packages that have tests, as "import-path folder", and those of each list (go list fails on a path that names no
# package, so a renamed package cannot silently leave a list).
listed() { "$go" list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' "$@"; }
all=$(listed ./...) || exit 1
norace=
if [ ${#norace_dirs[@]} -gt 0 ]; then norace=$(listed "${norace_dirs[@]}") || exit 1; fi
first=
if [ ${#first_dirs[@]} -gt 0 ]; then first=$(listed "${first_dirs[@]}") || exit 1; fi
racy=$(grep -vxF -f <(printf '%s\n' "$norace") <<<"$all")

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# compile SET FLAGS...: the set's packages (on stdin) into $bin/SET/N/, where N numbers groups of packages whose last
# path elements differ (go test -c -o names a binary after it: lab/chaos and cmd/chaos are both chaos.test). Prints
# "import-path folder binary" for each package.
compile() {
	local set=$1 rc=0
	shift
	awk -v dir="$bin/$set" '{ n = split($1, p, "/"); g = ++seen[p[n]]; print g, $1, $2, dir "/" g "/" p[n] ".test" }' |
		sort -n -s -k1,1 >"$out/$set.list"
	for g in $(cut -d' ' -f1 "$out/$set.list" | uniq); do
		mkdir -p "$bin/$set/$g"
		# shellcheck disable=SC2046 # one package per word
		"$go" test -c "$@" -o "$bin/$set/$g/" $(awk -v g="$g" '$1 == g { print $2 }' "$out/$set.list") || rc=1
	done
	cut -d' ' -f2- "$out/$set.list"
	return $rc
}

# The two sets compile at the same time; their flags differ, so they share no work.
if [ -n "$norace" ]; then
	compile norace "$@" <<<"$norace" >"$out/norace.pkgs" 2>"$out/norace.err" &
	pid=$!
fi
rc=0
if [ -n "$racy" ]; then
	# The race detector needs cgo, which the Makefile turns off for everything else. The set is a variant of its own
	# anyway, so it is compiled without the Makefile's -trimpath: its binaries record their source folders, which
	# samtemplate's TestLocateFromElsewhere needs.
	cgo=${CGO_ENABLED:-}
	if [ -n "$race" ]; then cgo=1; fi
	race_goflags=$(sed -E 's/(^| )-trimpath( |$)/ /g' <<<"${GOFLAGS:-}")
	# shellcheck disable=SC2086 # $race is empty or -race
	GOFLAGS=$race_goflags CGO_ENABLED=$cgo compile race $race "$@" <<<"$racy" >"$out/race.pkgs" || rc=1
fi
if [ -n "$norace" ]; then
	wait "$pid" || rc=1
	cat "$out/norace.err" >&2
fi
if [ "$rc" != 0 ]; then
	echo "go-test-sets: a package did not compile; no test ran" >&2
	exit 1
fi

# test2json, found once: `go tool test2json` starts the go command for each of the ~60 binaries, about 0.08 s of CPU
# time each, to find the same tool every time. `go tool -n` builds it into the build cache if it is not there and
# prints its path.
test2json=$("$go" tool -n test2json) || exit 1

# run IMPORT-PATH FOLDER BINARY: one test binary, as go test -json runs it.
run() {
	local log
	log=$(mktemp -p "$out")
	(cd "$2" && PWD=$2 "$test2json" -t -p "$1" "$3" -test.v=test2json -test.paniconexit0 \
		-test.timeout="$timeout") >"$log" 2>&1
	local status=$?
	# One package's events at a time (mkdir is atomic, and unlike flock it is on every system).
	until mkdir "$out/print.lock" 2>/dev/null; do sleep 0.05; done
	cat "$log"
	rmdir "$out/print.lock"
	return $status
}
export -f run
export out timeout test2json

# FIRST_PKGS in their order, then the others.
cat "$out/race.pkgs" "$out/norace.pkgs" 2>/dev/null |
	awk -v first="$(cut -d' ' -f1 <<<"$first" | tr '\n' ' ')" \
		'BEGIN { n = split(first, f, " "); for (i = 1; i <= n; i++) rank[f[i]] = i }
		{ print ($1 in rank ? rank[$1] : n + 1), NR, $0 }' |
	sort -n -k1,1 -k2,2 | cut -d' ' -f3- |
	xargs -P "$jobs" -L 1 bash -c 'run "$@"' _ || rc=1
exit "$rc"
