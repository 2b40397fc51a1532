#!/usr/bin/env bash
# chromium.sh prints the absolute path of a Chromium binary for the browser tests (lab/browser), installing one when
# the machine has none:
#
#   tools/chromium.sh             the path on stdout, nothing else on success
#
# It looks at $CHROMIUM_BIN first, then for chromium, chromium-browser and google-chrome on PATH. Without any, it
# installs the distribution's chromium package with apt-get (Debian's build: the browser downloads of Playwright and
# Puppeteer are not reachable from every machine this runs on, a distribution mirror is), running apt-get update only
# when the install fails without it, and through sudo only when not root. It exits non-zero, with the reason on
# stderr, when there is no binary and it cannot install one.
set -euo pipefail

fail() {
	echo "chromium.sh: $*" >&2
	exit 1
}

# found prints the absolute path of the first usable candidate and succeeds, or fails quietly.
found() {
	local name path
	if [ -n "${CHROMIUM_BIN:-}" ]; then
		[ -x "$CHROMIUM_BIN" ] && [ ! -d "$CHROMIUM_BIN" ] || fail "CHROMIUM_BIN=$CHROMIUM_BIN is not an executable file"
		case $CHROMIUM_BIN in
		/*) echo "$CHROMIUM_BIN" ;;
		*) echo "$PWD/$CHROMIUM_BIN" ;;
		esac
		return 0
	fi
	for name in chromium chromium-browser google-chrome; do
		if path=$(command -v "$name" 2>/dev/null) && [ -n "$path" ]; then
			case $path in
			/*) echo "$path"; return 0 ;;
			esac
		fi
	done
	return 1
}

found && exit 0

command -v apt-get >/dev/null 2>&1 ||
	fail "no chromium, chromium-browser or google-chrome on PATH and no apt-get to install one: install Chromium, or set CHROMIUM_BIN to its binary"

sudo=()
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null 2>&1 ||
		fail "no Chromium on PATH; installing Debian's chromium package needs root or sudo (apt-get install chromium), or set CHROMIUM_BIN"
	sudo=(sudo -n)
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# apt waits up to two minutes for another apt or dpkg holding the lock (a shared machine) instead of failing at once.
apt() {
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120 "$@" >>"$log" 2>&1
}
if ! apt install -y --no-install-recommends chromium; then
	{ apt update && apt install -y --no-install-recommends chromium; } || {
		tail -n 20 "$log" >&2
		fail "apt-get install chromium failed (its last lines above)"
	}
fi

found || fail "apt-get installed chromium, but no chromium binary is on PATH"
