#!/usr/bin/env bash
# Makes this CI machine look like a learner's laptop for the kind backend: a
# Docker daemon that answers. When none does, starts dockerd (installed by
# .ci/run) by hand (PID 1 is not systemd here), with the runc wrapper this
# machine needs as the default runtime. Prints the dockerd pid it
# started on stdout (nothing when a daemon already answered).
set -euo pipefail

if docker info >/dev/null 2>&1; then
  echo "Docker: a daemon already answers" >&2
  exit 0
fi

command -v dockerd >/dev/null || { echo "error: dockerd is not installed (.ci/run installs Debian's docker.io)" >&2; exit 1; }
command -v jq >/dev/null || { echo "error: jq is not installed (the runc wrapper needs it)" >&2; exit 1; }

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
