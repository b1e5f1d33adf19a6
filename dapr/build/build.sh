#!/usr/bin/env bash
# Builds daprd, placement and scheduler from the github.com/dapr/dapr Go module
# pinned in ./go.mod, into a per-version cache outside the repository.
#
#   npm run -s dapr:build            # builds once, then reuses the cache
#   DIR=$(npm run -s dapr:build | tail -1)
#
# Progress goes to stderr; the last (only) line on stdout is the directory that
# holds the three binaries.
#
# Environment:
#   GATEPOST_DAPR_BIN_DIR    use the binaries in this directory (e.g. ~/.dapr/bin
#                            after `dapr init`) and build nothing, if all three are there.
#   GATEPOST_DAPR_CACHE_DIR  cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/gatepost/dapr);
#                            binaries go to <root>/<version>/.
#   GATEPOST_DAPR_REBUILD=1  build even if the cache is complete.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BINS=(daprd placement scheduler)

# Version and the commit it was tagged at (as the module proxy reports it in the
# version's Origin). The version must agree with go.mod, which is the source of truth.
DAPR_VERSION="1.18.2"
DAPR_GIT_COMMIT="d2dd3747145e38e4d85db4714e26d7569c9c37db"

log() { printf '[dapr:build] %s\n' "$*" >&2; }
die() { printf '[dapr:build] error: %s\n' "$*" >&2; exit 1; }

have_all() {
  local dir="$1" b
  for b in "${BINS[@]}"; do [[ -x "$dir/$b" ]] || return 1; done
}

gomod_version="$(awk '$1 == "github.com/dapr/dapr" && $2 ~ /^v/ { print $2; exit }' "$HERE/go.mod")"
[[ "$gomod_version" == "v$DAPR_VERSION" ]] ||
  die "go.mod pins github.com/dapr/dapr ${gomod_version:-<none>} but build.sh says v$DAPR_VERSION; update both"

# 1. Binaries someone already has (e.g. from `dapr init`).
if [[ -n "${GATEPOST_DAPR_BIN_DIR:-}" ]]; then
  if have_all "$GATEPOST_DAPR_BIN_DIR"; then
    dir="$(cd "$GATEPOST_DAPR_BIN_DIR" && pwd)"
    their="$("$dir/daprd" --version 2>/dev/null | head -1 || true)"
    log "using GATEPOST_DAPR_BIN_DIR=$dir (daprd --version: ${their:-?}; pinned here: $DAPR_VERSION)"
    echo "$dir"
    exit 0
  fi
  log "GATEPOST_DAPR_BIN_DIR=$GATEPOST_DAPR_BIN_DIR lacks one of ${BINS[*]}; using the build cache instead"
fi

# 2. The per-version cache.
cache_root="${GATEPOST_DAPR_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gatepost/dapr}"
out="$cache_root/$DAPR_VERSION"
if [[ "${GATEPOST_DAPR_REBUILD:-0}" != 1 ]] && have_all "$out"; then
  log "cached: dapr $DAPR_VERSION binaries in $out"
  echo "$out"
  exit 0
fi

# 3. Build. One build at a time per cache root (parallel test workers may all ask).
command -v go >/dev/null || die "go is not on PATH (need Go >= 1.26.6 to build dapr $DAPR_VERSION)"
mkdir -p "$cache_root"
if command -v flock >/dev/null; then
  exec 9>"$cache_root/.lock"
  flock 9
  if [[ "${GATEPOST_DAPR_REBUILD:-0}" != 1 ]] && have_all "$out"; then
    log "built meanwhile by another run: $out"
    echo "$out"
    exit 0
  fi
fi

tmp="$(mktemp -d "$cache_root/.build-$DAPR_VERSION.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# Same -X flags as dapr's Makefile (DEFAULT_LDFLAGS) for a release build, plus
# its release-mode "-s -w". REL_VERSION there has no leading "v".
ldflags="-s -w"
ldflags+=" -X github.com/dapr/dapr/pkg/buildinfo.gitcommit=$DAPR_GIT_COMMIT"
ldflags+=" -X github.com/dapr/dapr/pkg/buildinfo.gitversion=v$DAPR_VERSION"
ldflags+=" -X github.com/dapr/dapr/pkg/buildinfo.version=$DAPR_VERSION"
ldflags+=" -X github.com/dapr/kit/logger.DaprVersion=$DAPR_VERSION"

pkgs=()
for b in "${BINS[@]}"; do pkgs+=("github.com/dapr/dapr/cmd/$b"); done

log "building dapr $DAPR_VERSION (${BINS[*]}) with $(go version | awk '{print $3}'); a fresh machine downloads modules and compiles for several minutes"
start=$SECONDS
# stablecomponents: daprd panics at start without a component flavour tag
# (cmd/daprd/components/zz_notag.go). The stable set has what Gatepost uses:
# Redis state store, pub/sub, configuration and binding; PostgreSQL state store
# (v1 and v2), configuration and binding. dapr's Makefile passes the same tags
# to every binary, so we do too.
go_build() {
  (
    cd "$HERE"
    CGO_ENABLED=0 go build -mod=readonly -trimpath \
      -tags stablecomponents \
      -ldflags "$ldflags" \
      -o "$tmp/" "${pkgs[@]}"
  )
}
# One retry: a passing fault (a module download, a killed compiler) should not
# cost a CI run; what was compiled before it stays in Go's build cache.
if ! go_build; then
  log "go build failed after $((SECONDS - start))s; retrying once"
  go_build || die "go build failed twice (see the Go errors above)"
fi
have_all "$tmp" || die "go build finished but $tmp lacks one of ${BINS[*]}"

mkdir -p "$out"
for b in "${BINS[@]}"; do mv -f "$tmp/$b" "$out/$b"; done
log "built in $((SECONDS - start))s: $out"
echo "$out"
