#!/usr/bin/env bash
# Makes this CI machine look like a learner's laptop for the kind backend: a
# Docker daemon that answers. When none does, installs Debian's docker.io and
# starts dockerd by hand (PID 1 is not systemd here), with the runc wrapper
# this machine needs as the default runtime. Prints the dockerd pid it
# started on stdout (nothing when a daemon already answered).
set -euo pipefail

if docker info >/dev/null 2>&1; then
  echo "Docker: a daemon already answers" >&2
  exit 0
fi

need=()
command -v dockerd >/dev/null || need+=(docker.io)
command -v jq >/dev/null || need+=(jq)
if ((${#need[@]})); then
  echo "Docker: installing ${need[*]} from Debian" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >&2
fi

# The wrapper lives outside the checkout: dockerd may outlive this clone.
wrapper=/usr/local/libexec/redis-operator-ci/runc-without-sys-resource
install -D -m 0755 "$(dirname "$0")/runc-without-sys-resource" "$wrapper"

log=/var/log/redis-operator-ci-dockerd.log
echo "Docker: starting dockerd (log: $log)" >&2
dockerd --add-runtime "ci-runc=$wrapper" --default-runtime ci-runc >"$log" 2>&1 &
pid=$!
for _ in $(seq 60); do
  if docker info >/dev/null 2>&1; then
    echo "Docker: daemon $(docker version --format '{{.Server.Version}}') answers (pid $pid)" >&2
    echo "$pid"
    exit 0
  fi
  if ! kill -0 "$pid" 2>/dev/null; then break; fi
  sleep 1
done
echo "error: dockerd did not answer within 60 s; last lines of $log:" >&2
tail -n 20 "$log" >&2
exit 1
