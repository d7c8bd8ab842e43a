#!/usr/bin/env bash
# CI smoke test of scripts/cluster.sh: a three-node LSM cluster on free loopback ports, started
# as cluster.sh starts one by default (TLS, mutual TLS between the nodes, clients with an API
# key), a few requests through different nodes, then down and cleanup. Exits non-zero on any
# failure.
#
#   scripts/smoke.sh            (after ./mvnw package or verify: needs service/target/quorumkv.jar)
#
# QKV_SMOKE_BASE_PORT (default 18181) picks the ports (base..base+2). Nodes run with a small
# heap and C1 only (QKV_JAVA_OPTS overrides) so that three of them start fast on 2 cores.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLUSTER="$ROOT/scripts/cluster.sh"
base_port="${QKV_SMOKE_BASE_PORT:-18181}"
export QKV_JAVA_OPTS="${QKV_JAVA_OPTS:--Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1}"
export QKV_UP_TIMEOUT="${QKV_UP_TIMEOUT:-90}"
dir="$(mktemp -d "${TMPDIR:-/tmp}/quorumkv-smoke.XXXXXX")"

cleanup() {
  local status=$?
  "$CLUSTER" down --dir "$dir" >/dev/null 2>&1 || true
  if [ "$status" -ne 0 ]; then
    for log in "$dir"/node*/node.log; do
      [ -f "$log" ] || continue
      echo "--- last lines of $log" >&2
      tail -n 15 "$log" >&2
    done
  fi
  rm -rf "$dir"
  exit "$status"
}
trap cleanup EXIT

fail() {
  echo "smoke: FAILED: $*" >&2
  exit 1
}

node() { echo "https://127.0.0.1:$((base_port + $1 - 1))"; }

# expect STATUS METHOD URL [BODY]: runs one request with the cluster's API key and checks its
# status; the answer body is left in $dir/body. QKV_SMOKE_KEY= (empty) sends no key.
expect() {
  local want="$1" method="$2" url="$3" got
  local -a data=() auth=()
  [ $# -lt 4 ] || data=(--data-binary "$4")
  [ -z "${QKV_SMOKE_KEY-$(cat "$dir/api-key")}" ] || auth=(-H "Authorization: Bearer $(cat "$dir/api-key")")
  got="$(curl -sS --cacert "$dir/ca.crt" -o "$dir/body" -w '%{http_code}' -m 10 -X "$method" "${auth[@]}" "${data[@]}" "$url")" ||
    fail "$method $url: curl failed"
  [ "$got" = "$want" ] || fail "$method $url answered $got, expected $want: $(head -c 200 "$dir/body")"
  echo "smoke: $method $url -> $got"
}

for ((i = 1; i <= 3; i++)); do
  if curl -s -k -o /dev/null -m 1 "$(node "$i")/"; then
    fail "port $((base_port + i - 1)) is in use: set QKV_SMOKE_BASE_PORT to a free range"
  fi
done

started=$SECONDS
"$CLUSTER" up --nodes 3 --backend lsm --base-port "$base_port" --dir "$dir"
"$CLUSTER" status --dir "$dir"

# The three nodes share this host's cores: each gets one event loop per core (unless
# QKV_JAVA_OPTS names a count).
cores="$(nproc)"
loops="$cores"
[[ "$QKV_JAVA_OPTS" != *-Dreactor.netty.ioWorkerCount=* ]] || loops="$(sed -n 's/.*-Dreactor.netty.ioWorkerCount=\([0-9]*\).*/\1/p' <<<"$QKV_JAVA_OPTS")"
for ((i = 1; i <= 3; i++)); do
  grep -q "ready: .*, event loops $loops\b" "$dir/node$i/node.log" ||
    fail "node $i did not start with $loops event loop(s) on $cores cores: $(grep -o 'event loops [0-9]*' "$dir/node$i/node.log")"
done
echo "smoke: each node runs $loops event loop(s) on $cores cores"

value="smoke-$RANDOM-ключ"
expect 201 PUT "$(node 1)/v0/entity?id=smoke-key&replicas=2/3" "$value"
expect 200 GET "$(node 2)/v0/entity?id=smoke-key&replicas=2/3"
[ "$(cat "$dir/body")" = "$value" ] || fail "GET through node 2 returned '$(cat "$dir/body")', expected '$value'"
expect 202 DELETE "$(node 3)/v0/entity?id=smoke-key&replicas=2/3"
expect 404 GET "$(node 1)/v0/entity?id=smoke-key&replicas=2/3"
expect 404 GET "$(node 2)/v0/entity?id=never-written"
expect 400 GET "$(node 3)/v0/entity?id=x&replicas=4/3"
QKV_SMOKE_KEY= expect 401 PUT "$(node 1)/v0/entity?id=smoke-key" "$value"

"$CLUSTER" down --dir "$dir"
for ((i = 1; i <= 3; i++)); do
  if curl -s -k -o /dev/null -m 1 "$(node "$i")/v0/status"; then
    fail "node $i still answers after down"
  fi
done
echo "smoke: OK in $((SECONDS - started))s"
