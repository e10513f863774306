#!/usr/bin/env bash
# Builds Kubernetes components from Go sources, at one pinned version,
# through the Go module proxy only. No container registry, no release
# download. By default it builds what the local cluster runs (etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler, kubemark) and a
# matching kubectl; the offline kind node image asks for kubeadm, kubelet and
# kube-proxy as well.
#
# The binaries are cached by version under $CACHE_DIR/kubernetes/<version>/bin,
# shared by both; a second run with a complete cache returns at once.
#
# Usage: scripts/build-kubernetes.sh KUBERNETES_VERSION ETCD_VERSION [COMPONENT...]
set -euo pipefail

usage="usage: $0 KUBERNETES_VERSION ETCD_VERSION [COMPONENT...]"
REPO=$(cd "$(dirname "$0")/.." && pwd)
K8S_VERSION=${1:?$usage}
ETCD_VERSION=${2:?$usage}
shift 2
CACHE_DIR=${CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/redis-operator}
ROOT="$CACHE_DIR/kubernetes/$K8S_VERSION"
OUT="$ROOT/bin"
COMPONENTS=("$@")
if [[ ${#COMPONENTS[@]} -eq 0 ]]; then
  COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kubemark kubectl)
fi
for c in "${COMPONENTS[@]}"; do
  case $c in
    etcd|kube-apiserver|kube-controller-manager|kube-scheduler|kubemark|kubectl|kubeadm|kubelet|kube-proxy) ;;
    *) echo "error: unknown component '$c' (known: etcd kube-apiserver kube-controller-manager kube-scheduler kubemark kubectl kubeadm kubelet kube-proxy)" >&2; exit 2 ;;
  esac
done

log() { printf '[build-kubernetes %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

missing=()
for c in "${COMPONENTS[@]}"; do
  [[ -x "$OUT/$c" ]] || missing+=("$c")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  log "Kubernetes $K8S_VERSION binaries cached in $OUT"
  exit 0
fi

command -v go >/dev/null || { echo "error: go is not on PATH" >&2; exit 1; }

# Staging modules are published as v0.<minor>.<patch> for v1.<minor>.<patch>.
STAGING_VERSION="v0.${K8S_VERSION#v1.}"
STAGING=(api apiextensions-apiserver apimachinery apiserver cli-runtime client-go
  cloud-provider cluster-bootstrap code-generator component-base component-helpers
  controller-manager cri-api cri-client cri-streaming csi-translation-lib
  dynamic-resource-allocation endpointslice externaljwt kms kube-aggregator
  kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics
  mount-utils pod-security-admission sample-apiserver streaming)

SRC="$ROOT/src"
mkdir -p "$SRC/cmd/etcd" "$OUT"
log "Preparing a build module for Kubernetes $K8S_VERSION in $SRC"
{
  echo "module localcluster.invalid/kubernetes"
  echo
  echo "go 1.25"
  echo
  echo "require k8s.io/kubernetes $K8S_VERSION"
  echo
  echo "replace ("
  for m in "${STAGING[@]}"; do echo "	k8s.io/$m => k8s.io/$m $STAGING_VERSION"; done
  echo ")"
} > "$SRC/go.mod"
cat > "$SRC/tools.go" <<'GO'
//go:build tools

// Package tools pins the Kubernetes commands this module builds.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubeadm"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubernetes/cmd/kubemark"
)
GO
cat > "$SRC/cmd/etcd/main.go" <<'GO'
// Command etcd is the etcd server at the version Kubernetes pins.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO

cd "$SRC"
export GOFLAGS=-mod=mod CGO_ENABLED=0
log "Resolving modules (first run downloads about 830 MB)"
go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >&2
# The course's own builds reuse what this one compiled (client-go,
# apimachinery, the standard library...) through go's build cache, where
# a package's inputs are the same: its flags (no -trimpath here, and
# CGO_ENABLED=0, as scripts/common.mk exports for the course) and the
# versions of everything below it. So this module also requires each
# module that both use at the version the course selects: minimal version
# selection keeps the newer of the two, as one module holding both would.
# (A newer go.yaml.in/yaml/v3 in the course alone made 124 of the
# packages they share differ.)
requires=()
while read -r path version; do
  requires+=("-require=$path@$version")
done < <(LC_ALL=C join <(GOFLAGS= go -C "$REPO" list -m -f '{{if not .Main}}{{.Path}} {{.Version}}{{end}}' all | LC_ALL=C sort) \
  <(go list -m -f '{{if not .Main}}{{.Path}} {{.Version}}{{end}}' all | LC_ALL=C sort) | awk '$2 != $3 {print $1, $2}')
if ((${#requires[@]})); then
  log "Aligning ${#requires[@]} module versions with the course's go.mod, so that go's build cache serves both"
  go mod edit "${requires[@]}"
fi
go mod tidy -e >/dev/null 2>&1 || true
go mod download >&2

minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
commit=$(go list -m -json k8s.io/kubernetes | sed -n 's/.*"Version": "\(.*\)".*/\1/p')
build_date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.gitCommit=$commit -X $pkg.buildDate=$build_date"
done

# go build is silent for minutes; say every 30 s that it is still working.
heartbeat() {
  local what=$1 since
  since=$(date +%s)
  while sleep 30; do log "... still building $what ($(( $(date +%s) - since )) s)"; done
}
# build NAME ARGS...: go build with a heartbeat, into $OUT/NAME atomically.
build() {
  local name=$1; shift
  heartbeat "$name" &
  local beat=$!
  local status=0
  go build -o "$OUT/$name.tmp" "$@" || status=$?
  kill "$beat" 2>/dev/null || true
  wait "$beat" 2>/dev/null || true
  (( status == 0 )) || { log "error: building $name failed"; exit "$status"; }
  mv "$OUT/$name.tmp" "$OUT/$name"
}

start=$(date +%s)
for c in "${COMPONENTS[@]}"; do
  [[ -x "$OUT/$c" ]] && { log "$c cached"; continue; }
  case $c in
    etcd) log "Building etcd $ETCD_VERSION (about 2 minutes cold)"
      build etcd -ldflags "-s -w" ./cmd/etcd
      continue ;;
    kube-apiserver) hint="about 8 minutes cold, the longest step" ;;
    kube-controller-manager) hint="about 4 minutes cold" ;;
    kubeadm) hint="about 5 minutes cold" ;;
    *) hint="about 1 minute cold" ;;
  esac
  log "Building $c $K8S_VERSION ($hint)"
  build "$c" -ldflags "$ldflags" "k8s.io/kubernetes/cmd/$c"
done
log "Kubernetes $K8S_VERSION built into $OUT in $(( $(date +%s) - start )) s"
