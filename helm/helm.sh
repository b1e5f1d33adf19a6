#!/usr/bin/env bash
# Prints the path of a helm 3 binary, building it once from the helm.sh/helm/v3 Go module
# (through the Go module proxy) into a per-version cache outside the repository.
#
#   HELM=$(bash helm/helm.sh) && "$HELM" lint helm/gatepost
#
# Progress goes to stderr; the only line on stdout is the binary's path.
#
# Environment:
#   GATEPOST_HELM            use this helm binary and build nothing.
#   GATEPOST_HELM_CACHE_DIR  cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/gatepost/helm);
#                            the binary goes to <root>/<version>/helm.
set -euo pipefail

HELM_VERSION="v3.22.0"

log() { printf '[helm.sh] %s\n' "$*" >&2; }

if [[ -n "${GATEPOST_HELM:-}" ]]; then
  [[ -x "$GATEPOST_HELM" ]] || { log "GATEPOST_HELM=$GATEPOST_HELM is not executable"; exit 1; }
  printf '%s\n' "$GATEPOST_HELM"
  exit 0
fi

root="${GATEPOST_HELM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gatepost/helm}"
dir="$root/$HELM_VERSION"
bin="$dir/helm"

if [[ ! -x "$bin" ]]; then
  command -v go >/dev/null || { log "needs Go to build helm $HELM_VERSION (or set GATEPOST_HELM)"; exit 1; }
  mkdir -p "$dir"
  # Build into a private directory, then rename: concurrent callers never see a partial binary.
  tmp="$(mktemp -d "$dir/.build.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  log "building helm $HELM_VERSION with $(go env GOVERSION) (module download and build: minutes, once)"
  start=$SECONDS
  # The link flags of helm's Makefile: its version, and the Kubernetes version `helm template`
  # and `helm lint` assume (1.<minor of k8s.io/client-go>; without them: 1.20, older than charts
  # with a kubeVersion allow). Outside any module, so the repository's Go modules play no part.
  gomod="$(cd "$tmp" && go mod download -json "helm.sh/helm/v3@$HELM_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')"
  k8s_minor="$(awk '$1 == "k8s.io/client-go" { split($2, v, "."); print v[2]; exit }' "$gomod")"
  [[ "$k8s_minor" =~ ^[0-9]+$ ]] || { log "cannot read k8s.io/client-go's version from $gomod"; exit 1; }
  pkg=helm.sh/helm/v3
  ldflags="-s -w -X $pkg/internal/version.version=$HELM_VERSION"
  for v in pkg/lint/rules pkg/chartutil; do
    ldflags+=" -X $pkg/$v.k8sVersionMajor=1 -X $pkg/$v.k8sVersionMinor=$k8s_minor"
  done
  (cd "$tmp" && GOBIN="$tmp" go install -ldflags "$ldflags" "$pkg/cmd/helm@$HELM_VERSION")
  mv -f "$tmp/helm" "$bin"
  log "built $bin in $((SECONDS - start)) s"
fi

printf '%s\n' "$bin"
