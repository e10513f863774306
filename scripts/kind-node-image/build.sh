#!/usr/bin/env bash
# Builds a kind node image with no container registry: Kubernetes from Go
# sources (the same cache as the local cluster), containerd, runc and the CNI
# plugins from Go sources at the versions kind's own base image uses (not
# crictl: minutes of a cold build, and containerd's ctr does what it did),
# a Debian root filesystem from Debian's packages (debootstrap), and kind's
# base files from the kind Go module. The images a cluster needs at start
# (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy,
# pause) and the image of the operator's Redis pods are built here and
# preloaded into the node's containerd, so nothing is ever pulled. There is
# no CoreDNS: nothing in the course resolves a name inside the cluster, and
# building it took minutes of a cold start; the image is labelled so that
# kubeadm does not deploy it.
#
# kind's own `kind build node-image` pulls several of those images, which is
# why this script exists. It follows kind's images/base/Dockerfile and
# pkg/build/nodeimage step by step; the differences are named where they are.
#
# The result is tagged $KIND_NODE_IMAGE and labelled with a hash of this
# recipe and its versions: a second run with the same recipe returns at once.
# Build outputs are cached by version under $CACHE_DIR.
#
# With --runtime (make kind-node-runtime) it builds only what needs neither
# Kubernetes nor Docker, into the same caches: the node runtime (step 2)
# and the Debian root filesystems (step 3). CI runs that first, niced,
# while Kubernetes builds, to use the CPU its links leave idle.
#
# Configuration comes from the environment (the Makefile sets all of it):
#   KUBERNETES_VERSION ETCD_VERSION KIND_VERSION CONTAINERD_VERSION
#   RUNC_VERSION CNI_PLUGINS_VERSION DEBIAN_SUITE DEBIAN_MIRROR
#   KIND_NODE_IMAGE REDIS_IMAGE CACHE_DIR
set -euo pipefail

RUNTIME_ONLY=""
case "${1:-}" in
  --runtime) RUNTIME_ONLY=yes ;;
  "") ;;
  *) echo "error: unknown argument $1 (the only one is --runtime)" >&2; exit 2 ;;
esac

for v in KUBERNETES_VERSION ETCD_VERSION KIND_VERSION CONTAINERD_VERSION RUNC_VERSION \
  CNI_PLUGINS_VERSION DEBIAN_SUITE DEBIAN_MIRROR KIND_NODE_IMAGE REDIS_IMAGE; do
  [[ -n "${!v:-}" ]] || { echo "error: $v is not set (run this through 'make kind-node-image')" >&2; exit 2; }
done
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CACHE_DIR=${CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/redis-operator}
RECIPE_LABEL=com.example.redis-operator.kind-node.recipe
# The provider reads this label to know the image brings its own CNI config.
CNI_LABEL=com.example.redis-operator.kind-node.cni
# And this one to know it has no CoreDNS (kubeadm must not deploy it).
NO_COREDNS_LABEL=com.example.redis-operator.kind-node.no-coredns

STEPS=8 step=0 started=$(date +%s)
[[ -z $RUNTIME_ONLY ]] || STEPS=2
log() { printf '[kind-node-image %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
step() { step=$((step + 1)); log "[$step/$STEPS] $*"; }
die() { echo "error: $*" >&2; exit 1; }

# ---- the recipe hash: everything that goes into the image --------------------
# This directory's files, the script that builds Kubernetes, the Go that
# compiles every binary, and every version.
recipe=$( {
  find "$HERE" -type f -print0 | sort -z | xargs -0 sha256sum | sed "s|$HERE/||"
  sha256sum "$HERE/../build-kubernetes.sh" | sed "s|$HERE/../||"
  echo "GO=$(go env GOVERSION)"
  for v in KUBERNETES_VERSION ETCD_VERSION KIND_VERSION CONTAINERD_VERSION RUNC_VERSION \
    CNI_PLUGINS_VERSION DEBIAN_SUITE REDIS_IMAGE; do echo "$v=${!v}"; done
} | sha256sum | cut -c1-16)

# ---- preflight: one line per missing prerequisite ---------------------------
# (--runtime: no Docker; whatever is cached already returns at once.)
if [[ -z $RUNTIME_ONLY ]]; then
  command -v docker >/dev/null || die "docker is not on PATH: the node image is a Docker image (install Docker first)"
  docker info >/dev/null 2>&1 || die "no Docker daemon answers (is dockerd running? 'docker info' says: $(docker info 2>&1 | grep -m1 -i error || true))"
  if [[ "$(docker image inspect --format "{{ index .Config.Labels \"$RECIPE_LABEL\" }}" "$KIND_NODE_IMAGE" 2>/dev/null || true)" == "$recipe" ]]; then
    log "$KIND_NODE_IMAGE is up to date (recipe $recipe)"
    exit 0
  fi
fi
[[ $(id -u) == 0 ]] || die "building the node's Debian root filesystem needs root (debootstrap, chroot): run 'sudo make kind-node-image'"
for tool in debootstrap jq pkg-config gcc; do
  command -v "$tool" >/dev/null || die "$tool is missing: apt-get install debootstrap jq pkg-config gcc libseccomp-dev"
done
pkg-config --exists libseccomp || die "libseccomp-dev is missing (runc links it): apt-get install libseccomp-dev"

if [[ -n $RUNTIME_ONLY ]]; then
  log "Building the node runtime and root filesystems of $KIND_NODE_IMAGE (no Kubernetes, no Docker; recipe $recipe)"
else
  log "Building $KIND_NODE_IMAGE: Kubernetes $KUBERNETES_VERSION, kind $KIND_VERSION base, Debian $DEBIAN_SUITE (recipe $recipe)"
  log "Cold, this takes about 26 minutes on 2 cores (17 of them building Kubernetes, shared with the local cluster); every step is cached."
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kind-node-image.XXXXXX")
BUILD_CONTAINER=""
TEMP_IMAGES=()
DEBOOTSTRAP_PID=""
cleanup() {
  # A build that failed before step 3 stops the root filesystems' too.
  if [[ -n $DEBOOTSTRAP_PID ]]; then pkill -P "$DEBOOTSTRAP_PID" 2>/dev/null; kill "$DEBOOTSTRAP_PID" 2>/dev/null; fi
  [[ -n $BUILD_CONTAINER ]] && docker rm -f -v "$BUILD_CONTAINER" >/dev/null 2>&1
  ((${#TEMP_IMAGES[@]})) && docker rmi "${TEMP_IMAGES[@]}" >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT

# heartbeat: say every 30 s that a silent command is still working.
with_heartbeat() {
  local what=$1; shift
  local since beat status=0
  since=$(date +%s)
  (while sleep 30; do log "... still $what ($(( $(date +%s) - since )) s)"; done) &
  beat=$!
  "$@" || status=$?
  kill "$beat" 2>/dev/null || true
  wait "$beat" 2>/dev/null || true
  return "$status"
}

# ---- Debian root filesystems, in the background --------------------------------
# debootstrap waits on the network and the disk, the Go builds of steps 1
# and 2 on the CPU: the root filesystems are made meanwhile (step 3 waits
# for them), which saves minutes of a cold build.
# debootstrap_tar NAME PACKAGES: a minbase Debian root filesystem with
# PACKAGES, cached as a tarball keyed by suite and package list.
debootstrap_tar() {
  local name=$1 packages=$2 key tar root
  key=$(echo "$DEBIAN_SUITE $packages" | sha256sum | cut -c1-12)
  tar="$CACHE_DIR/kind-node/rootfs/$name-$DEBIAN_SUITE-$key.tar"
  if [[ -f $tar ]]; then log "$name root filesystem cached ($tar)"; echo "$tar"; return; fi
  mkdir -p "$CACHE_DIR/kind-node/rootfs" "$CACHE_DIR/kind-node/debs"
  root="$WORK/debootstrap-$name"
  log "debootstrap $DEBIAN_SUITE for the $name ($DEBIAN_MIRROR)"
  with_heartbeat "bootstrapping the $name root filesystem" \
    debootstrap --variant=minbase --include="$packages" --cache-dir="$CACHE_DIR/kind-node/debs" \
      "$DEBIAN_SUITE" "$root" "$DEBIAN_MIRROR" >"$WORK/debootstrap-$name.log" 2>&1 ||
    { tail -n 20 "$WORK/debootstrap-$name.log" >&2; die "debootstrap failed (is $DEBIAN_MIRROR reachable? set DEBIAN_MIRROR to a Debian mirror you can reach)"; }
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar -C "$root" --numeric-owner -cf "$tar.tmp" . && mv "$tar.tmp" "$tar"
  rm -rf "$root"
  echo "$tar"
}
(
  # kind's base image packages, less the storage e2e ones (nfs-common,
  # open-iscsi) and fuse-overlayfs (rootless only).
  debootstrap_tar node \
    systemd,conntrack,iptables,nftables,iproute2,ethtool,util-linux,mount,kmod,libseccomp2,pigz,e2fsprogs,bash,ca-certificates,curl,jq,procps
  # The base of the images that need more than one static binary: kube-proxy
  # (iptables, nftables, conntrack, like registry.k8s.io's distroless-iptables)
  # and the Redis pods (Debian's redis-server).
  debootstrap_tar images-base iptables,nftables,conntrack,redis-server
) >"$WORK/rootfs" &
DEBOOTSTRAP_PID=$!

# ---- 1. Kubernetes ------------------------------------------------------------
if [[ -z $RUNTIME_ONLY ]]; then
  step "Kubernetes $KUBERNETES_VERSION from Go sources (shared with the local cluster's cache)"
  "$REPO/scripts/build-kubernetes.sh" "$KUBERNETES_VERSION" "$ETCD_VERSION" \
    etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kubeadm kubelet kube-proxy
  K8S_BIN="$CACHE_DIR/kubernetes/$KUBERNETES_VERSION/bin"

  # The images kubeadm wants for this version, e.g. registry.k8s.io/etcd:3.7.0-0.
  mapfile -t KUBEADM_IMAGES < <("$K8S_BIN/kubeadm" config images list --kubernetes-version "$KUBERNETES_VERSION")
  image_tag() { # image_tag NAME: the tag kubeadm wants for registry.k8s.io/.../NAME
    local i
    for i in "${KUBEADM_IMAGES[@]}"; do [[ ${i%:*} == */"$1" ]] && { echo "${i##*:}"; return; }; done
    die "kubeadm $KUBERNETES_VERSION does not list an image named $1"
  }
  ETCD_TAG=$(image_tag etcd) PAUSE_TAG=$(image_tag pause)
  [[ ${ETCD_TAG%-*} == "${ETCD_VERSION#v}" ]] ||
    die "kubeadm $KUBERNETES_VERSION wants etcd $ETCD_TAG but ETCD_VERSION is $ETCD_VERSION"
fi

# ---- 2. node runtime from Go sources ----------------------------------------------
step "containerd $CONTAINERD_VERSION, runc $RUNC_VERSION, CNI plugins $CNI_PLUGINS_VERSION"
TOOLS="$CACHE_DIR/kind-node/tools"
# go_build NAME MODULE VERSION CGO TAGS PACKAGE...: builds PACKAGE... (paths
# inside MODULE) in MODULE's own source tree at VERSION, so its go.mod
# decides the dependencies, into $TOOLS/NAME-VERSION, unless they are there
# already. (Not `go install pkg@version`: for cri-tools it asks the proxy
# for a version list, which the proxy refuses.)
go_build() {
  local name=$1 module=$2 version=$3 cgo=$4 tags=$5; shift 5
  local dir="$TOOLS/$name-$version" src p pkgs=()
  [[ -f "$dir/.done" ]] && { log "$name $version cached"; return; }
  log "Building $name $version"
  src=$(cd "$WORK" && go mod download -json "$module@$version" | jq -r .Dir) && [[ -d $src ]] ||
    die "cannot download $module@$version from the Go module proxy"
  for p in "$@"; do pkgs+=("./$p"); done
  rm -rf "$dir" && mkdir -p "$dir"
  CGO_ENABLED=$cgo with_heartbeat "building $name" \
    go build -C "$src" -trimpath -tags "$tags" -ldflags "-s -w" -o "$dir/" "${pkgs[@]}" ||
    die "building $name $version failed"
  touch "$dir/.done"
}
go_build containerd github.com/containerd/containerd/v2 "$CONTAINERD_VERSION" 0 \
  "no_aufs no_zfs no_btrfs no_devmapper urfave_cli_no_docs" cmd/containerd cmd/ctr
go_build containerd-shim github.com/containerd/containerd/v2 "$CONTAINERD_VERSION" 0 \
  "no_aufs no_zfs no_btrfs no_devmapper no_grpc urfave_cli_no_docs" cmd/containerd-shim-runc-v2
go_build runc github.com/opencontainers/runc "$RUNC_VERSION" 1 "seccomp urfave_cli_no_docs" .
# kind ships host-local, loopback, ptp and portmap with kindnetd; with no
# kindnetd offline, the node uses the bridge plugin and a baked config.
go_build cni-plugins github.com/containernetworking/plugins "$CNI_PLUGINS_VERSION" 0 "" \
  plugins/ipam/host-local plugins/main/bridge plugins/main/loopback plugins/main/ptp plugins/meta/portmap
mkdir -p "$WORK/pause"
CGO_ENABLED=0 go build -C "$REPO" -trimpath -ldflags "-s -w" -o "$WORK/pause/pause" ./scripts/kind-node-image/pause

# ---- 3. Debian root filesystems -----------------------------------------------
# Started in the background before step 1 (see there); here, its result.
step "Debian $DEBIAN_SUITE root filesystems (debootstrap, cached; started before step 1)"
wait "$DEBOOTSTRAP_PID" || { DEBOOTSTRAP_PID=""; die "making the Debian root filesystems failed; see above"; }
DEBOOTSTRAP_PID=""
{ read -r NODE_ROOTFS; read -r IMAGES_ROOTFS; } <"$WORK/rootfs"
if [[ -n $RUNTIME_ONLY ]]; then
  log "The node runtime and root filesystems are built and cached ($(( $(date +%s) - started )) s); make kind-node-image builds the rest"
  exit 0
fi

# ---- 4. the preloaded container images ----------------------------------------
step "Container images for the node: control plane, kube-proxy, pause, Redis"
BUILD_PREFIX=kind-node-build.invalid
IMAGE_NAMES=()
qualify() { # qualify IMAGE: the fully qualified name, as containerd stores it
  local name=$1 first=${1%%/*}
  if [[ $name != */* ]]; then name=docker.io/library/$name
  elif [[ $first != *.* && $first != *:* && $first != localhost ]]; then name=docker.io/$name; fi
  [[ ${name##*/} == *:* || $name == *@* ]] || name+=:latest
  echo "$name"
}
# new_image FINAL: sets TMP_NAME to a temporary Docker name for the image
# FINAL. The temporary names never shadow an image the user has (a real
# redis, say); inside the node they are renamed to FINAL.
new_image() {
  local final
  final=$(qualify "$1")
  TMP_NAME="$BUILD_PREFIX/$final"
  TEMP_IMAGES+=("$TMP_NAME") IMAGE_NAMES+=("$final")
}
# static_image FINAL BINARY ENTRYPOINT: a one-file image, the binary in /usr/local/bin.
static_image() {
  local dir="$WORK/image-$RANDOM"
  new_image "$1"
  mkdir -p "$dir/usr/local/bin" "$dir/tmp" "$dir/etc"
  chmod 1777 "$dir/tmp"
  cp "$2" "$dir/usr/local/bin/"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/:/sbin/nologin\n' >"$dir/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\n' >"$dir/etc/group"
  tar -C "$dir" --numeric-owner --owner=0 --group=0 -c . | docker import \
    --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' --change "ENTRYPOINT $3" - "$TMP_NAME" >/dev/null
  rm -rf "$dir"
}
static_image "registry.k8s.io/kube-apiserver:$KUBERNETES_VERSION" "$K8S_BIN/kube-apiserver" '["kube-apiserver"]'
static_image "registry.k8s.io/kube-controller-manager:$KUBERNETES_VERSION" "$K8S_BIN/kube-controller-manager" '["kube-controller-manager"]'
static_image "registry.k8s.io/kube-scheduler:$KUBERNETES_VERSION" "$K8S_BIN/kube-scheduler" '["kube-scheduler"]'
static_image "registry.k8s.io/etcd:$ETCD_TAG" "$K8S_BIN/etcd" '["etcd"]'
static_image "registry.k8s.io/pause:$PAUSE_TAG" "$WORK/pause/pause" '["/usr/local/bin/pause"]'

# Images on the Debian base share its layer, in Docker and in the node.
IMAGES_BASE="$BUILD_PREFIX/images-base:$DEBIAN_SUITE"
TEMP_IMAGES+=("$IMAGES_BASE")
docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  "$IMAGES_ROOTFS" "$IMAGES_BASE" >/dev/null
# derived_image FINAL SETUP CHANGE...: the Debian base plus what the shell
# command SETUP does in it, with Dockerfile-like CHANGEs.
derived_image() {
  local ctr setup=$2 changes=() c
  new_image "$1"; shift 2
  for c in "$@"; do changes+=(--change "$c"); done
  ctr=$(docker create --entrypoint /bin/sh "$IMAGES_BASE" -c "$setup")
  BUILD_CONTAINER=$ctr
  [[ -n ${DERIVED_FILE:-} ]] && docker cp "$DERIVED_FILE" "$ctr:/usr/local/bin/"
  docker start -a "$ctr" >&2
  docker commit "${changes[@]}" "$ctr" "$TMP_NAME" >/dev/null
  docker rm -v "$ctr" >/dev/null
  BUILD_CONTAINER=""
}
DERIVED_FILE="$K8S_BIN/kube-proxy" derived_image "registry.k8s.io/kube-proxy:$KUBERNETES_VERSION" \
  'chmod 0755 /usr/local/bin/kube-proxy' \
  'ENTRYPOINT ["/usr/local/bin/kube-proxy"]' 'CMD []'
# Like the official Redis image: data in /data, the redis user, protected
# mode off (other pods may connect), and PID 1 exits on SIGTERM.
derived_image "$REDIS_IMAGE" 'install -d -o redis -g redis /data' \
  'WORKDIR /data' 'USER redis' 'EXPOSE 6379' \
  'ENTRYPOINT ["redis-server"]' 'CMD ["--protected-mode", "no"]'
redis_version=$(docker run --rm --entrypoint redis-server "$BUILD_PREFIX/$(qualify "$REDIS_IMAGE")" --version)
log "$(qualify "$REDIS_IMAGE") runs Debian $DEBIAN_SUITE's redis-server: ${redis_version%% sha=*}"
docker save -o "$WORK/images.tar" "${IMAGE_NAMES[@]/#/$BUILD_PREFIX/}"

# ---- 5. the node's root filesystem --------------------------------------------
step "Node root filesystem: Debian + kind $KIND_VERSION base files + binaries"
# kind at the version go.mod requires, downloaded if need be.
KIND_DIR=$(cd "$REPO" && go mod download -json sigs.k8s.io/kind | jq -r .Dir)
[[ -d $KIND_DIR/images/base/files ]] || die "cannot download kind's base files (go mod download sigs.k8s.io/kind)"
BASE_FILES="$KIND_DIR/images/base/files"
ROOT="$WORK/node"
mkdir -p "$ROOT"
tar -C "$ROOT" --numeric-owner -xf "$NODE_ROOTFS"
# The COPY lines of kind's Dockerfile: scripts 0755, other files 0644.
install -m 0755 -t "$ROOT/usr/local/bin" "$BASE_FILES"/usr/local/bin/*
mkdir -p "$ROOT/kind/bin" "$ROOT/LICENSES"
install -m 0644 -t "$ROOT/kind" "$BASE_FILES"/kind/README.txt
install -m 0755 -t "$ROOT/kind/bin" "$BASE_FILES"/kind/bin/*
install -m 0644 -t "$ROOT/LICENSES" "$BASE_FILES"/LICENSES/*
install -m 0644 -D -t "$ROOT/etc/containerd" "$BASE_FILES"/etc/containerd/*
install -m 0644 -D -t "$ROOT/etc/default" "$BASE_FILES"/etc/default/*
install -m 0644 -D -t "$ROOT/etc/sysctl.d" "$BASE_FILES"/etc/sysctl.d/*
install -m 0644 -t "$ROOT/etc/systemd/system" "$BASE_FILES"/etc/systemd/system/*.service "$BASE_FILES"/etc/systemd/system/*.slice
install -m 0644 -D -t "$ROOT/etc/systemd/system/kubelet.service.d" "$BASE_FILES"/etc/systemd/system/kubelet.service.d/*
# The RUN lines of kind's Dockerfile.
find "$ROOT/lib/systemd/system/sysinit.target.wants/" -name systemd-tmpfiles-setup.service -delete
rm -f "$ROOT"/lib/systemd/system/multi-user.target.wants/* "$ROOT"/etc/systemd/system/*.wants/* \
  "$ROOT"/lib/systemd/system/local-fs.target.wants/* "$ROOT"/lib/systemd/system/sockets.target.wants/*udev* \
  "$ROOT"/lib/systemd/system/sockets.target.wants/*initctl* "$ROOT"/lib/systemd/system/basic.target.wants/*
echo "ReadKMsg=no" >>"$ROOT/etc/systemd/journald.conf"
ln -sf /usr/lib/systemd/systemd "$ROOT/sbin/init"
chroot "$ROOT" systemctl enable kubelet.service containerd.service undo-mount-hacks.service
chroot "$ROOT" systemctl mask systemd-binfmt.service
mkdir -p "$ROOT/etc/kubernetes/manifests"
# The runtime, as kind's base image installs it.
install -m 0755 -t "$ROOT/usr/local/bin" "$TOOLS/containerd-$CONTAINERD_VERSION"/{containerd,ctr} \
  "$TOOLS/containerd-shim-$CONTAINERD_VERSION/containerd-shim-runc-v2"
install -m 0755 -D "$TOOLS/runc-$RUNC_VERSION/runc" "$ROOT/usr/local/sbin/runc"
install -m 0755 -D -t "$ROOT/opt/cni/bin" "$TOOLS/cni-plugins-$CNI_PLUGINS_VERSION"/*
"$ROOT/usr/local/bin/ctr" oci spec |
  jq '.hooks.createContainer[.hooks.createContainer | length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' |
  jq 'del(.process.rlimits)' >"$ROOT/etc/containerd/cri-base.json"
# What kind's node image build adds: Kubernetes in /usr/bin, the version, and
# the sandbox image kubeadm wants.
install -m 0755 -t "$ROOT/usr/bin" "$K8S_BIN"/{kubeadm,kubelet,kubectl}
echo "$KUBERNETES_VERSION" >"$ROOT/kind/version"
sed -i "s|sandbox_image = .*|sandbox_image = \"registry.k8s.io/pause:$PAUSE_TAG\"|" "$ROOT/etc/containerd/config.toml"
# Offline there is no kindnetd image: a bridge CNI config for the one node
# (kind's default pod subnet, 10.244.0.0/16, gives it 10.244.0.0/24).
install -m 0644 -D -t "$ROOT/etc/cni/net.d" "$HERE"/files/etc/cni/net.d/*

# ---- 6. import as an image ----------------------------------------------------
step "Importing the node root filesystem into Docker"
NODE_TMP="$BUILD_PREFIX/node:$recipe"
TEMP_IMAGES+=("$NODE_TMP")
with_heartbeat "importing the node root filesystem" \
  bash -c 'set -o pipefail; tar -C "$1" --numeric-owner -c . | docker import - "$2" >/dev/null' _ "$ROOT" "$NODE_TMP"
rm -rf "$ROOT"

# ---- 7. preload the images into the node's containerd --------------------------
step "Preloading ${#IMAGE_NAMES[@]} images into the node's containerd"
# As kind does: containerd in a build container, images imported without
# unpacking. Here containerd is the container's main process, so that
# `docker stop` shuts it down cleanly before the commit.
# systemd in the node stops on SIGRTMIN+3, as in kind's image; docker
# commit cannot set STOPSIGNAL, so the build container carries it.
BUILD_CONTAINER=$(docker run -d --entrypoint containerd --security-opt seccomp=unconfined \
  --stop-signal SIGRTMIN+3 "$NODE_TMP")
# node_ctr ARGS...: ctr in the build container, without containerd's
# warning that cgroup v1 is deprecated on every call.
node_ctr() {
  docker exec -i "$BUILD_CONTAINER" ctr --namespace=k8s.io "$@" 2> >(grep -v 'support for cgroup v1 is deprecated' >&2)
}
for _ in $(seq 30); do node_ctr version >/dev/null 2>&1 && break; sleep 1; done
node_ctr version >/dev/null || die "containerd did not start in the build container"
node_ctr images import --all-platforms --no-unpack --digests - <"$WORK/images.tar" >/dev/null
for final in "${IMAGE_NAMES[@]}"; do
  node_ctr images tag --force "$BUILD_PREFIX/$final" "$final" >/dev/null
  node_ctr images rm "$BUILD_PREFIX/$final" >/dev/null
  node_ctr images label "$final" io.cri-containerd.pinned=pinned >/dev/null
  log "  $final"
done
docker kill --signal TERM "$BUILD_CONTAINER" >/dev/null
docker wait "$BUILD_CONTAINER" >/dev/null

# ---- 8. commit ------------------------------------------------------------------
step "Committing $KIND_NODE_IMAGE"
docker commit \
  --change 'ENV container=docker PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' \
  --change 'CMD []' \
  --change "LABEL $RECIPE_LABEL=$recipe $CNI_LABEL=bridge $NO_COREDNS_LABEL=true" \
  "$BUILD_CONTAINER" "$KIND_NODE_IMAGE" >/dev/null
log "Built $KIND_NODE_IMAGE ($(docker image inspect --format '{{.Size}}' "$KIND_NODE_IMAGE" | awk '{printf "%d MB", $1/1e6}')) in $(( $(date +%s) - started )) s"
