#!/usr/bin/env bash
# go-test-sets.sh FLAGS...: go test -json FLAGS of every package of the module, in two sets run at the same time:
# NORACE_PKGS (relative package paths) without the race detector, every other package with $RACE (-race, or empty
# where there is no C compiler). make test runs it under gotestsum (Makefile, test-go, says which packages and why).
#
# The race set's events are streamed (it holds the end-to-end suite, the longest); the other set's are written to a
# temporary file and printed after, so that the two streams never interleave. FIRST_PKGS (relative paths, of the race
# set) are started before the others. The exit status is non-zero when either set failed. GO is the go command
# (default go).
set -uo pipefail

go=${GO:-go}
race=${RACE:-}
read -r -a norace_dirs <<<"${NORACE_PKGS:-}"

all=$("$go" list ./...) || exit 1
if [ ${#norace_dirs[@]} -gt 0 ]; then
	# go list fails on a path that names no package, so a renamed package cannot silently leave this list.
	norace=$("$go" list "${norace_dirs[@]}") || exit 1
else
	norace=
fi
race_pkgs=$(grep -vxF -f <(printf '%s\n' "$norace") <<<"$all")
# go test starts the packages in the order given (-p at a time): the longest first, so that they are not left to
# start last.
if [ -n "${FIRST_PKGS:-}" ]; then
	# shellcheck disable=SC2086 # one package per word
	first=$("$go" list $FIRST_PKGS) || exit 1
	race_pkgs=$(printf '%s\n' "$first"; grep -vxF -f <(printf '%s\n' "$first") <<<"$race_pkgs")
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

pid=
if [ -n "$norace" ]; then
	# shellcheck disable=SC2086 # one package per word
	"$go" test -json "$@" $norace >"$out/norace.json" 2>"$out/norace.err" &
	pid=$!
fi
rc=0
# shellcheck disable=SC2086 # $race is empty or -race; one package per word
"$go" test -json $race "$@" $race_pkgs || rc=1
if [ -n "$pid" ]; then
	wait "$pid" || rc=1
	cat "$out/norace.json"
	cat "$out/norace.err" >&2
fi
exit "$rc"
