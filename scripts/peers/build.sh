#!/usr/bin/env bash
# Builds the Go test peers at the versions pinned in scripts/peers/versions into a cache folder outside the
# repository (ANNALS_PEERS_DIR, default ~/.cache/annals-peers), where test/support/go-peers.ts finds them:
#   ferretdb       FerretDB v1, a MongoDB wire-protocol server (MongoDB suites)
#   minio          MinIO, the S3 server (blob and media suites)
#   witness        transparency-dev's omniwitness, a C2SP tlog-witness (audit checkpoints)
#   <test/peers/*> small Go programs of the project's own (the tlog verifier), built from their sources
# With no argument, builds every peer; otherwise the ones named. A peer already built is not built again.
# Needs Go and the Go module proxy. Prints one JSON line per peer on stdout: {"peer","binary","cached"}.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=versions
. "$root/scripts/peers/versions"
out=${ANNALS_PEERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/annals-peers}
mkdir -p "$out"
command -v go >/dev/null 2>&1 || { echo "scripts/peers/build.sh: Go is not installed (https://go.dev/doc/install)" >&2; exit 2; }
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"
export CGO_ENABLED=0

say() { printf '%s\n' "$*" >&2; }
report() { printf '{"peer":"%s","binary":"%s","cached":%s}\n' "$1" "$2" "$3"; }

# A module from the proxy, built inside a writable copy of its folder in the module cache: `go install
# module/cmd@version` refuses modules whose go.mod has replace lines, builds outside the module would not
# take its go.sum, and some modules need a file written before they build (see prepare_ferretdb).
build_module() {
  local peer=$1 module=$2 version=$3 package=$4 prepare=${5:-}
  local binary="$out/$peer-$version"
  if [ -x "$binary" ]; then report "$peer" "$binary" true; return; fi
  say "== building $peer ($module@$version)"
  local started=$SECONDS dir work
  dir=$(go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] || { say "go mod download $module@$version gave no folder"; exit 1; }
  work=$(mktemp -d)
  cp -R "$dir/." "$work" && chmod -R u+w "$work"
  [ -z "$prepare" ] || (cd "$work" && "$prepare" "$version")
  (cd "$work" && go build -trimpath -o "$binary.partial" "./$package")
  rm -rf "$work"
  mv "$binary.partial" "$binary"
  say "== built $peer in $((SECONDS - started)) s"
  report "$peer" "$binary" false
}

# FerretDB embeds its version from build/version/version.txt, which its release tooling writes (`bin/task
# gen-version`) and the module does not ship: without it the binary panics at start.
prepare_ferretdb() { printf '%s\n' "$1" > build/version/version.txt; }

# The project's own Go programs under test/peers/<name>: named by a digest of their sources (the same digest
# test/support/go-peers.ts computes), so that a change to them builds anew.
source_digest() {
  local dir=$1
  (cd "$dir" && for file in $(ls go.mod go.sum *.go 2>/dev/null | LC_ALL=C sort); do printf '%s\n' "$file"; cat "$file"; done) | sha256sum | cut -c1-16
}

build_own() {
  local peer=$1 dir="$root/test/peers/$1"
  [ -f "$dir/go.mod" ] || { say "no Go program at test/peers/$peer"; exit 1; }
  local binary="$out/$peer-$(source_digest "$dir")"
  if [ -x "$binary" ]; then report "$peer" "$binary" true; return; fi
  say "== building $peer (test/peers/$peer)"
  (cd "$dir" && go build -trimpath -o "$binary.partial" .)
  mv "$binary.partial" "$binary"
  report "$peer" "$binary" false
}

build() {
  case "$1" in
    ferretdb) build_module ferretdb github.com/FerretDB/FerretDB "$FERRETDB_VERSION" cmd/ferretdb prepare_ferretdb ;;
    minio) build_module minio github.com/minio/minio "$MINIO_VERSION" . ;;
    witness) build_module witness github.com/transparency-dev/witness "$WITNESS_VERSION" cmd/omniwitness ;;
    *) build_own "$1" ;;
  esac
}

if [ $# -eq 0 ]; then
  set -- ferretdb minio witness
  for dir in "$root"/test/peers/*/; do [ -f "$dir/go.mod" ] && set -- "$@" "$(basename "$dir")"; done
fi
for peer in "$@"; do build "$peer"; done
