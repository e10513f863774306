#!/usr/bin/env bash
# The operator in one minute: run the latest chapter's operator, create a
# Redis with three pods, delete one with kubectl and watch it come back with
# the same name and a new UID. Expects a running cluster with the CRD
# installed (`make demo` does both) and bin/operator built.
set -euo pipefail
cd "$(dirname "$0")/.."

KUBECTL=${KUBECTL:-kubectl}
[[ -x $KUBECTL ]] || KUBECTL=kubectl
NS=redis-demo
LOG=_output/logs/demo-operator.log
k() { "$KUBECTL" "$@"; }
if [[ -t 1 ]]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s==> %s%s\n' "$bold" "$*" "$plain"; }
pods() { k get pods -n "$NS" -l app.kubernetes.io/instance=redis-sample \
  -o custom-columns=NAME:.metadata.name,UID:.metadata.uid,STATUS:.status.phase; }
# wait_for DESCRIPTION COMMAND...: retry COMMAND until it succeeds, 90 s at most.
wait_for() {
  local what=$1; shift
  for _ in $(seq 1 360); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.25
  done
  echo "error: timed out waiting for $what; operator log: $LOG" >&2
  exit 1
}
new_and_running() {
  local now
  now=$(k get pod "$1" -n "$NS" -o jsonpath='{.metadata.uid} {.status.phase}' 2>/dev/null) || return 1
  [[ $now == *" Running" && $now != "$2 "* ]]
}

mkdir -p "$(dirname "$LOG")"
step "Starting bin/operator (latest chapter); log: $LOG"
env -u OPERATOR_CHAPTER ENABLE_WEBHOOKS=false bin/operator >"$LOG" 2>&1 &
operator=$!
cleanup() {
  k delete namespace "$NS" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  # The operator removes the Redis' finalizers; give it a moment to do so.
  for _ in $(seq 1 40); do k get redis -n "$NS" redis-sample >/dev/null 2>&1 || break; sleep 0.25; done
  kill "$operator" 2>/dev/null || true
  wait "$operator" 2>/dev/null || true
}
trap cleanup EXIT

step "Creating namespace $NS and the sample Redis (config/samples/myapp_v1_redis.yaml)"
k create namespace "$NS" --dry-run=client -o yaml | k apply -f - >/dev/null
k apply -n "$NS" -f config/samples/myapp_v1_redis.yaml
for i in 0 1 2; do
  wait_for "pod redis-sample-$i to run" \
    bash -c "[[ \$('$KUBECTL' get pod redis-sample-$i -n $NS -o jsonpath='{.status.phase}') == Running ]]"
done
pods
old_uid=$(k get pod redis-sample-1 -n "$NS" -o jsonpath='{.metadata.uid}')

step "kubectl delete pod redis-sample-1"
k delete pod redis-sample-1 -n "$NS"
wait_for "redis-sample-1 to be rebuilt" new_and_running redis-sample-1 "$old_uid"

step "redis-sample-1 is back under the same name with a new UID; the Redis' events show the operator creating it"
pods
echo
k get events -n "$NS" --field-selector involvedObject.kind=Redis,reason=SuccessfulCreate
step "Done; cleaning up namespace $NS"
