#!/usr/bin/env bash
# cached-install.sh installs what `make` needs from npm and PyPI once per content, in a cache outside the clone, so
# that the next clone of the repository (or the same one after `make clean`) reuses it instead of installing again:
#
#   tools/cached-install.sh node                      node_modules from package.json and package-lock.json
#   tools/cached-install.sh venv LINK REQUIREMENTS    a Python virtual environment with REQUIREMENTS' pins, at LINK
#   tools/cached-install.sh venvs LINK REQUIREMENTS …  several, the distinct requirements files installed at once
#
# The cache is $TRANSFERFLOW_CACHE, default ${XDG_CACHE_HOME:-$HOME/.cache}/transferflow. An entry is named after
# the SHA-256 of everything that decides its content (the lock or requirements file, the interpreter's version and
# path, the platform), built under a lock and marked complete only at the end, so an interrupted install is redone
# and two clones installing at once build it once. Deleting the cache directory is always safe.
#
# - node: node_modules is a copy of the cached one (15 MB, under a second): npm finds packages by real path, and a
#   copy keeps a later `npm install` in the clone from changing the cache. node_modules/.transferflow-key records
#   which entry it is, so an unchanged lock file costs nothing.
# - venv: LINK is a symbolic link to the cached environment. A virtual environment is not relocatable (pyvenv.cfg and
#   every script's #! line name its absolute path), so it is created where it stays, in the cache, and clones link
#   to it; caching pip's downloads instead would still reinstall every package into each clone (minutes for the SAM
#   CLI). A LINK that is a directory or a link elsewhere (an older clone's own .venv) is replaced by the link.
set -euo pipefail

cache=${TRANSFERFLOW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/transferflow}

say() { echo "cached-install: $*"; }

sha256() {
	if command -v sha256sum >/dev/null 2>&1; then sha256sum | cut -c1-16; else shasum -a 256 | cut -c1-16; fi
}

# build ENTRY FUNCTION: runs FUNCTION ENTRY to fill the cache entry unless it is complete; under a lock when flock
# exists (not on macOS: two simultaneous first installs then both build, the second replacing the first).
build() {
	local entry=$1 fill=$2 fd=
	[ -f "$entry/.complete" ] && return 0
	mkdir -p "$cache"
	if command -v flock >/dev/null 2>&1; then
		exec {fd}>"$entry.lock" # a descriptor of its own: a fill may build another entry (uv) under its lock
		flock "$fd"
	fi
	if [ ! -f "$entry/.complete" ]; then
		rm -rf "$entry"
		mkdir -p "$entry"
		"$fill" "$entry"
		touch "$entry/.complete"
	fi
	if [ -n "$fd" ]; then exec {fd}>&-; fi
}

fill_node() {
	say "npm install into $1 (once per package-lock.json)"
	cp package.json package-lock.json "$1/"
	# npm ci cannot be used: the registry mirror lacks the other platforms' optional @dynoxide packages, so they
	# cannot be written into the lock file; npm install with the committed lock installs the pinned build.
	(cd "$1" && npm install --no-audit --no-fund --loglevel=error)
}

install_node() {
	local key entry
	key=$( { cat package.json package-lock.json; uname -sm; node --version; } | sha256)
	entry=$cache/node-$key
	if [ "$(cat node_modules/.transferflow-key 2>/dev/null)" = "$key" ]; then return 0; fi
	build "$entry" fill_node
	rm -rf node_modules
	cp -a "$entry/node_modules" node_modules
	echo "$key" >node_modules/.transferflow-key
	say "node_modules copied from $entry"
}

# uv, Astral's installer for Python packages, installs the environments: from the same pins it installs the same
# versions as pip, in a few seconds of CPU time where pip spends about a minute on each environment (the SAM CLI's
# dozens of packages). It is itself installed with pip, once per version, into the cache. pip's index settings
# (index-url, extra-index-url, find-links and cert, from pip's configuration files and PIP_* variables) are passed on
# to it; where uv cannot install (an index only pip knows how to reach, say), pip does. Neither byte-compiles: Python
# compiles a module the first time it is imported, and caches it, as it does for any module (the Makefile has it keep
# that bytecode under the cache's pycache, whether or not PYTHONDONTWRITEBYTECODE is set), where compiling every
# module of every package (botocore's thousands) would be most of an install's CPU.
UV_VERSION=0.13.9

fill_uv() {
	say "installing uv $UV_VERSION into $1 (once per version)"
	python3 -m venv "$1"
	"$1/bin/pip" install -q --disable-pip-version-check --no-compile "uv==$UV_VERSION"
}

# uv_install VENV: the virtual environment VENV with $requirements' pins, made by uv.
uv_install() {
	local python uv line name value v args=()
	python=$(command -v python3)
	uv=$cache/uv-$( { echo "$UV_VERSION"; "$python" -c 'import sys; print(sys.version, sys.executable)'; uname -sm; } | sha256)
	build "$uv" fill_uv || return 1
	while IFS= read -r line; do
		name=${line%%=*} value=${line#*=}
		name=${name##*.} value=${value#\'} value=${value%\'}
		case $name in
		index-url) args+=(--default-index "$value") ;;
		extra-index-url) for v in $value; do args+=(--index "$v"); done ;;
		find-links) for v in $value; do args+=(--find-links "$v"); done ;;
		cert) export SSL_CERT_FILE=$value ;;
		esac
	done < <("$python" -m pip config list 2>/dev/null)
	export UV_CACHE_DIR=$cache/uv-cache
	"$uv/bin/uv" venv -q --python "$python" "$1" &&
		"$uv/bin/uv" pip install -q --python "$1/bin/python" ${args[@]+"${args[@]}"} -r "$requirements"
}

requirements=
fill_venv() {
	say "creating the virtual environment $1 with $requirements (once per requirements file)"
	if (uv_install "$1"); then return 0; fi
	say "uv could not install $requirements; pip installs it"
	rm -rf "$1"
	python3 -m venv "$1"
	"$1/bin/pip" install -q --disable-pip-version-check --no-compile -r "$requirements"
}

install_venv() {
	local link=$1 key entry
	requirements=$2
	key=$( { cat "$requirements"; python3 -c 'import sys; print(sys.version, sys.executable, sys.base_prefix)'; uname -sm; } | sha256)
	entry=$cache/venv-$(basename "$requirements" .txt)-$key
	build "$entry" fill_venv
	if [ -L "$link" ] && [ "$(readlink "$link")" = "$entry" ]; then return 0; fi
	if [ -e "$link" ] || [ -L "$link" ]; then
		say "replacing $link (a directory or another link) with a link to the cache"
		rm -rf "$link"
	fi
	ln -s "$entry" "$link"
	say "$link -> $entry"
}

# install_venvs LINK REQUIREMENTS [LINK REQUIREMENTS ...]: install_venv of each pair, the distinct requirements
# files at once (pip spends most of a cold install downloading and unpacking, not computing), each one's output
# printed whole when all have ended, in the order given; then the links that share a requirements file with an
# earlier pair (the same cache entry: only a link). Any failure fails the whole, after every install has ended.
install_venvs() {
	local out rc=0 i=0 pids=() args=() later=() seen=" "
	out=$(mktemp -d)
	while [ $# -ge 2 ]; do
		case "$seen" in
		*" $2 "*) later+=("$1" "$2") ;;
		*)
			seen="$seen$2 "
			(install_venv "$1" "$2") >"$out/$i" 2>&1 &
			pids+=($!); args+=("$1 $2"); i=$((i + 1)) ;;
		esac
		shift 2
	done
	for i in "${!pids[@]}"; do
		if ! wait "${pids[$i]}"; then rc=1; say "failed: venv ${args[$i]}"; fi
		cat "$out/$i"
	done
	rm -rf "$out"
	[ "$rc" -eq 0 ] || return "$rc"
	set -- ${later[@]+"${later[@]}"}
	while [ $# -ge 2 ]; do install_venv "$1" "$2"; shift 2; done
}

case "${1:-}" in
node) install_node ;;
venv) [ $# -eq 3 ] || { echo "usage: $0 venv LINK REQUIREMENTS" >&2; exit 2; }; install_venv "$2" "$3" ;;
venvs) [ $# -ge 3 ] && [ $(($# % 2)) -eq 1 ] || { echo "usage: $0 venvs LINK REQUIREMENTS [LINK REQUIREMENTS ...]" >&2; exit 2; }
	shift; install_venvs "$@" ;;
*) echo "usage: $0 node | venv LINK REQUIREMENTS | venvs LINK REQUIREMENTS [LINK REQUIREMENTS ...]" >&2; exit 2 ;;
esac
