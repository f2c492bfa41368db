#!/usr/bin/env bash
# Builds LinkedIn's Burrow (the Go lag monitor whose status rules the console's follow) into .cache/burrow-VERSION/bin,
# once: tests/offsets/lag/test_burrow_parity.py runs it against the test broker as the oracle of
# offsets/lag/status.py. Quick when built; prints the binary's path, or why it could not be built (exit 1).
#
# Where from: a checkout of Burrow at that version in BURROW_SRC or .cache/burrow-VERSION/src if there is one (its
# dependencies come from the Go module proxy), else `go install` from the Go module proxy, which on 2026-11-29
# answered 403 "This module version is not available" for github.com/linkedin/Burrow (every version).
set -euo pipefail
version="${BURROW_VERSION:-v1.9.5}"
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.cache/burrow-$version"
binary="$dir/bin/Burrow"
if [ -x "$binary" ]; then echo "$binary"; exit 0; fi
go_cmd="$(command -v go || true)"
[ -n "$go_cmd" ] || { [ -x /usr/local/go/bin/go ] && go_cmd=/usr/local/go/bin/go; }
# No Go is installed for it: the proxy refuses Burrow, so a toolchain fetched for nothing but a 403 would be waste.
[ -n "$go_cmd" ] || { echo "no Go toolchain (go on PATH or /usr/local/go/bin/go) to build Burrow with" >&2; exit 1; }
src="${BURROW_SRC:-$dir/src}"
mkdir -p "$dir"
rm -rf "$dir/bin.partial"
# The module and build caches stay beside the binary, so a build touches nothing of the user's Go set-up; a build
# that fails half-way leaves no binary, and the next call tries again.
export GOMODCACHE="$dir/mod" GOCACHE="$dir/build" GOFLAGS="-modcacherw -buildvcs=false"
if [ -f "$src/go.mod" ] && grep -q '^module github.com/linkedin/Burrow' "$src/go.mod"; then
  echo "Building Burrow from $src with $("$go_cmd" version) into $dir/bin" >&2
  (cd "$src" && nice "$go_cmd" build -o "$dir/bin.partial/Burrow" .) >&2
else
  echo "Building Burrow $version from the Go module proxy with $("$go_cmd" version) into $dir/bin" >&2
  GOBIN="$dir/bin.partial" nice "$go_cmd" install "github.com/linkedin/Burrow@$version" >&2
fi
mv "$dir/bin.partial" "$dir/bin"
echo "$binary"
