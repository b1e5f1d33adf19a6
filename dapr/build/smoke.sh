#!/usr/bin/env bash
# Smoke test for the binaries from build.sh: versions, then placement, scheduler
# and a standalone daprd (Redis state store as actor state store, Redis pub/sub,
# PostgreSQL state store) on loopback, each for a few seconds. Prints what it
# checked; exits non-zero on the first failure (after printing the logs).
#
#   bash dapr/build/smoke.sh            # builds first if needed
#   KEEP_LOGS=1 bash dapr/build/smoke.sh
#
# Needs: curl, node, redis-server/redis-cli (Redis on 127.0.0.1:6379, started
# here if it is not answering), optionally PostgreSQL on 127.0.0.1:5432 with
# trust auth (checked when pg_isready says it accepts connections).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BIN="$(bash "$HERE/build.sh" | tail -1)"

passed=0
failed=0
work="$(mktemp -d "${TMPDIR:-/tmp}/gatepost-dapr-smoke.XXXXXX")"
pids=()
pg_db=""
tag="gatepost-smoke-$$"

ok() { passed=$((passed + 1)); printf 'ok    %s\n' "$*"; }
fail() {
  failed=$((failed + 1))
  printf 'FAIL  %s\n' "$*"
  for f in "$work"/*.log; do
    [[ -f "$f" ]] || continue
    printf -- '----- last lines of %s\n' "$(basename "$f")"
    tail -n 25 "$f"
  done
  exit 1
}

cleanup() {
  local pid i
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  redis-cli -h 127.0.0.1 -p 6379 --scan --pattern "*$tag*" 2>/dev/null |
    while read -r k; do redis-cli -h 127.0.0.1 -p 6379 del "$k" >/dev/null; done || true
  if [[ -n "$pg_db" ]]; then dropdb -h 127.0.0.1 -U postgres --if-exists "$pg_db" 2>/dev/null || true; fi
  if [[ "${KEEP_LOGS:-0}" == 1 ]]; then echo "logs kept in $work"; else rm -rf "$work"; fi
  echo "smoke: $passed passed, $failed failed"
}
trap cleanup EXIT

# Free loopback ports, all held at once so they are distinct.
read -r -a ports < <(node -e '
  const net = require("net"); const n = +process.argv[1]; const ss = [];
  let left = n;
  for (let i = 0; i < n; i++) { const s = net.createServer(); ss.push(s);
    s.listen(0, "127.0.0.1", () => { if (--left === 0) {
      console.log(ss.map(x => x.address().port).join(" ")); ss.forEach(x => x.close()); } }); }' 11)
P_PLACEMENT=${ports[0]} P_PLACEMENT_HEALTH=${ports[1]} P_PLACEMENT_RAFT=${ports[2]}
P_SCHED=${ports[3]} P_SCHED_HEALTH=${ports[4]} P_ETCD_CLIENT=${ports[5]} P_ETCD_PEER=${ports[6]}
P_HTTP=${ports[7]} P_GRPC=${ports[8]} P_INTERNAL=${ports[9]} P_PUBLIC=${ports[10]}

# http_code URL [curl args...] -> prints the status code, body to $work/body
http_code() {
  local url="$1"; shift
  curl -s -o "$work/body" -w '%{http_code}' --max-time 5 "$@" "$url" || echo 000
}

# wait_http NAME URL WANT PID [SECONDS]
wait_http() {
  local name="$1" url="$2" want="$3" pid="$4" secs="${5:-60}" code="" i
  for i in $(seq 1 $((secs * 5))); do
    kill -0 "$pid" 2>/dev/null || fail "$name exited before $url answered"
    code="$(http_code "$url")"
    [[ "$code" == "$want" ]] && return 0
    sleep 0.2
  done
  fail "$name: GET $url gave $code, want $want after ${secs}s"
}

# body_is JSON: the last response body equals JSON (as values; stores differ in spacing)
body_is() {
  node -e 'const a=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")), b=JSON.parse(process.argv[2]);
    process.exit(JSON.stringify(a) === JSON.stringify(b) ? 0 : 1)' "$work/body" "$1" 2>/dev/null
}
json() { node -e "const d=JSON.parse(require('fs').readFileSync(process.argv[1],'utf8')); const f=$1; console.log(f(d))" "$work/body"; }

echo "binaries: $BIN"
ls -l "$BIN"/daprd "$BIN"/placement "$BIN"/scheduler | awk '{printf "      %-10s %6.1f MB\n", $NF, $5/1e6}' | sed "s#$BIN/##"

# 1. Versions.
v="$("$BIN/daprd" --version)"
[[ -n "$v" ]] || fail "daprd --version printed nothing"
ok "daprd --version: $v"
"$BIN/daprd" --build-info >"$work/buildinfo.txt" 2>&1 || fail "daprd --build-info failed"
ok "daprd --build-info: $(tr -s '\n ' ' ' <"$work/buildinfo.txt" | sed 's/ $//')"
if command -v go >/dev/null; then
  settings="$(go version -m "$BIN/daprd" | awk '$1 == "build" && ($2 ~ /^-tags=/ || $2 ~ /^CGO_ENABLED=/) { printf "%s ", $2 }')"
  [[ "$settings" == *"-tags=stablecomponents"* && "$settings" == *"CGO_ENABLED=0"* ]] ||
    fail "daprd build settings lack -tags=stablecomponents / CGO_ENABLED=0: $settings"
  ok "daprd built with: $settings(go version -m)"
fi

# 2. Redis (and PostgreSQL, if there).
if [[ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" != PONG ]]; then
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for i in $(seq 1 50); do [[ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" == PONG ]] && break; sleep 0.1; done
fi
[[ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" == PONG ]] || fail "Redis on 127.0.0.1:6379 does not answer PING"
ok "Redis answers on 127.0.0.1:6379"

have_pg=0
if command -v pg_isready >/dev/null && pg_isready -q -h 127.0.0.1 -p 5432; then
  pg_db="gatepost_dapr_smoke_$$"
  createdb -h 127.0.0.1 -U postgres "$pg_db" || fail "createdb $pg_db"
  have_pg=1
  ok "PostgreSQL answers on 127.0.0.1:5432 (database $pg_db for this run)"
else
  echo "skip  PostgreSQL state store: nothing accepts connections on 127.0.0.1:5432"
fi

# 3. Placement.
"$BIN/placement" --listen-address 127.0.0.1 --port "$P_PLACEMENT" \
  --healthz-listen-address 127.0.0.1 --healthz-port "$P_PLACEMENT_HEALTH" \
  --initial-cluster "dapr-placement-0=127.0.0.1:$P_PLACEMENT_RAFT" \
  --enable-metrics=false >"$work/placement.log" 2>&1 &
pids+=($!)
wait_http placement "http://127.0.0.1:$P_PLACEMENT_HEALTH/healthz" 200 "${pids[-1]}"
pv="$(grep -o 'Starting Dapr Placement Service -- version [^ ]* -- commit [^ "]*' "$work/placement.log" | head -1)"
ok "placement healthy on 127.0.0.1:$P_PLACEMENT (healthz 200); log: ${pv:-<no version line>}"

# 4. Scheduler (embedded etcd in a temp data dir).
"$BIN/scheduler" --listen-address 127.0.0.1 --port "$P_SCHED" \
  --override-broadcast-host-port "127.0.0.1:$P_SCHED" \
  --healthz-listen-address 127.0.0.1 --healthz-port "$P_SCHED_HEALTH" \
  --etcd-data-dir "$work/etcd" \
  --etcd-client-listen-address 127.0.0.1 --etcd-client-port "$P_ETCD_CLIENT" \
  --etcd-initial-cluster "dapr-scheduler-server-0=http://127.0.0.1:$P_ETCD_PEER" \
  --enable-metrics=false >"$work/scheduler.log" 2>&1 &
pids+=($!)
wait_http scheduler "http://127.0.0.1:$P_SCHED_HEALTH/healthz" 200 "${pids[-1]}"
sv="$(grep -o 'Starting Dapr Scheduler Service -- version [^ ]* -- commit [^ "]*' "$work/scheduler.log" | head -1)"
ok "scheduler healthy on 127.0.0.1:$P_SCHED (healthz 200, etcd data in a temp dir); log: ${sv:-<no version line>}"

# 5. daprd, standalone, with components.
mkdir -p "$work/resources"
cat >"$work/resources/statestore.yaml" <<EOF
apiVersion: dapr.io/v1alpha1
kind: Component
metadata:
  name: statestore
spec:
  type: state.redis
  version: v1
  metadata:
    - name: redisHost
      value: 127.0.0.1:6379
    - name: redisPassword
      value: ""
    - name: keyPrefix
      value: name
    - name: actorStateStore
      value: "true"
EOF
cat >"$work/resources/pubsub.yaml" <<EOF
apiVersion: dapr.io/v1alpha1
kind: Component
metadata:
  name: pubsub
spec:
  type: pubsub.redis
  version: v1
  metadata:
    - name: redisHost
      value: 127.0.0.1:6379
    - name: redisPassword
      value: ""
EOF
if [[ $have_pg == 1 ]]; then
  cat >"$work/resources/pgstate.yaml" <<EOF
apiVersion: dapr.io/v1alpha1
kind: Component
metadata:
  name: pgstate
spec:
  type: state.postgresql
  version: v1
  metadata:
    - name: connectionString
      value: "host=127.0.0.1 port=5432 user=postgres dbname=$pg_db sslmode=disable"
EOF
fi

"$BIN/daprd" --app-id test --mode standalone \
  --dapr-listen-addresses 127.0.0.1 --dapr-http-port "$P_HTTP" --dapr-grpc-port "$P_GRPC" \
  --dapr-internal-grpc-listen-address 127.0.0.1 --dapr-internal-grpc-port "$P_INTERNAL" \
  --dapr-public-listen-address 127.0.0.1 --dapr-public-port "$P_PUBLIC" \
  --resources-path "$work/resources" \
  --placement-host-address "127.0.0.1:$P_PLACEMENT" \
  --scheduler-host-address "127.0.0.1:$P_SCHED" \
  --enable-metrics=false >"$work/daprd.log" 2>&1 &
pids+=($!)
DAPRD_PID=${pids[-1]}
API="http://127.0.0.1:$P_HTTP"
wait_http daprd "$API/v1.0/healthz/outbound" 204 "$DAPRD_PID"
ok "daprd GET /v1.0/healthz/outbound -> 204"
wait_http daprd "$API/v1.0/healthz" 204 "$DAPRD_PID"
ok "daprd GET /v1.0/healthz -> 204"

code="$(http_code "$API/v1.0/metadata")"
[[ "$code" == 200 ]] || fail "GET /v1.0/metadata -> $code"
comps="$(json 'd => (d.components||[]).map(c => c.name + "=" + c.type + "/" + c.version).sort().join(" ")')"
want="pubsub=pubsub.redis/v1 statestore=state.redis/v1"
[[ $have_pg == 1 ]] && want="pgstate=state.postgresql/v1 $want"
[[ "$comps" == "$want" ]] || fail "metadata components: got '$comps', want '$want'"
ok "daprd GET /v1.0/metadata: id=$(json 'd => d.id'), runtime $(json 'd => d.runtimeVersion'), components: $comps"

# Placement and scheduler connections as daprd reports them.
for i in $(seq 1 50); do
  http_code "$API/v1.0/metadata" >/dev/null
  placement_status="$(json 'd => (d.actorRuntime||{}).placement || ""')"
  sched="$(json 'd => ((d.scheduler||{}).connected_addresses || []).join(",")')"
  [[ "$placement_status" == "placement: connected" && -n "$sched" ]] && break
  sleep 0.2
done
[[ "$placement_status" == "placement: connected" ]] ||
  fail "metadata actorRuntime.placement is '$placement_status', want 'placement: connected'"
ok "daprd metadata: actorRuntime $(json 'd => JSON.stringify(d.actorRuntime)')"
[[ "$sched" == "127.0.0.1:$P_SCHED" ]] || fail "metadata scheduler.connected_addresses is '$sched'"
ok "daprd metadata: scheduler connected_addresses=[$sched]"

# Round trips through the components.
key="$tag-key"
code="$(http_code "$API/v1.0/state/statestore" -X POST -H 'content-type: application/json' \
  -d "[{\"key\":\"$key\",\"value\":{\"hello\":\"redis\"}}]")"
[[ "$code" == 204 ]] || fail "POST /v1.0/state/statestore -> $code: $(cat "$work/body")"
code="$(http_code "$API/v1.0/state/statestore/$key")"
[[ "$code" == 200 ]] && body_is '{"hello":"redis"}' || fail "GET state/statestore/$key -> $code $(cat "$work/body")"
http_code "$API/v1.0/state/statestore/$key" -X DELETE >/dev/null
ok "Redis state store: save, get ({\"hello\":\"redis\"}), delete"

code="$(http_code "$API/v1.0/publish/pubsub/$tag" -X POST -H 'content-type: application/json' -d '{"hello":"pubsub"}')"
[[ "$code" == 204 ]] || fail "POST /v1.0/publish/pubsub/$tag -> $code: $(cat "$work/body")"
[[ "$(redis-cli -h 127.0.0.1 -p 6379 xlen "$tag")" == 1 ]] || fail "Redis stream $tag does not hold the published message"
ok "Redis pub/sub: publish -> 204, message in Redis stream $tag"

if [[ $have_pg == 1 ]]; then
  code="$(http_code "$API/v1.0/state/pgstate" -X POST -H 'content-type: application/json' \
    -d "[{\"key\":\"$key\",\"value\":{\"hello\":\"postgres\"}}]")"
  [[ "$code" == 204 ]] || fail "POST /v1.0/state/pgstate -> $code: $(cat "$work/body")"
  code="$(http_code "$API/v1.0/state/pgstate/$key")"
  [[ "$code" == 200 ]] && body_is '{"hello":"postgres"}' || fail "GET state/pgstate/$key -> $code $(cat "$work/body")"
  ok "PostgreSQL state store: save, get ({\"hello\":\"postgres\"})"
fi

code="$(http_code "$API/v1.0-alpha1/jobs/$tag" -X POST -H 'content-type: application/json' \
  -d '{"dueTime":"1h","data":{"hello":"scheduler"}}')"
[[ "$code" == 204 ]] || fail "POST /v1.0-alpha1/jobs/$tag -> $code: $(cat "$work/body")"
code="$(http_code "$API/v1.0-alpha1/jobs/$tag")"
[[ "$code" == 200 ]] || fail "GET /v1.0-alpha1/jobs/$tag -> $code: $(cat "$work/body")"
code="$(http_code "$API/v1.0-alpha1/jobs/$tag" -X DELETE)"
[[ "$code" == 204 ]] || fail "DELETE /v1.0-alpha1/jobs/$tag -> $code"
ok "scheduler via daprd jobs API: schedule, get, delete a job"

# 6. Stop everything; each must exit on SIGTERM.
for pid in "${pids[@]}"; do kill -TERM "$pid"; done
for pid in "${pids[@]}"; do
  for i in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then fail "process $pid still running 15s after SIGTERM"; fi
done
ok "placement, scheduler and daprd stopped on SIGTERM"
pids=()
