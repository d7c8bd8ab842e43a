# shellcheck shell=bash
# One LSM node of service/target/quorumkv.jar (or of the jar LSM_NODE_JAR names) on a data
# folder, for the scripts that measure a single node on a large data set (scale-probe.sh,
# gc-compare.sh). Needs ROOT, JAVA and curl.
#
#   start_lsm_node PORT DATA_DIR NODE_LOG JVM_LOG JVM_OPTION...
#     starts the node with the given JVM options, its collector's pauses and the safepoints
#     (time to reach one included) logged to JVM_LOG, and returns once it answers a GET of
#     k0000000000 with 200 (a key of the loaded set); sets LSM_NODE_PID. Exits if the node dies.
#   stop_lsm_node
#     SIGTERM, up to 30 s to stop, then SIGKILL; clears LSM_NODE_PID.

LSM_NODE_PID=""

start_lsm_node() {
  local port="$1" dir="$2" node_log="$3" jvm_log="$4" i
  shift 4
  "$JAVA" "$@" -Xlog:gc,safepoint:file="$jvm_log":uptime,level,tags \
    -jar "${LSM_NODE_JAR:-$ROOT/service/target/quorumkv.jar}" --server.port="$port" \
    --quorumkv.storage.backend=lsm --quorumkv.storage.path="$dir" >"$node_log" 2>&1 </dev/null &
  LSM_NODE_PID=$!
  for ((i = 0; i < 1800; i++)); do
    [ "$(curl -s -o /dev/null -m 1 -w '%{http_code}' "http://127.0.0.1:$port/v0/entity?id=k0000000000" || true)" = 200 ] \
      && return 0
    kill -0 "$LSM_NODE_PID" 2>/dev/null || { echo "the node died; see $node_log" >&2; exit 1; }
    sleep 0.1
  done
  echo "the node did not answer within 180 s; see $node_log" >&2
  kill -9 "$LSM_NODE_PID" 2>/dev/null || true
  exit 1
}

stop_lsm_node() {
  local i
  [ -n "$LSM_NODE_PID" ] || return 0
  kill "$LSM_NODE_PID" 2>/dev/null || true
  for ((i = 0; i < 300; i++)); do
    kill -0 "$LSM_NODE_PID" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$LSM_NODE_PID" 2>/dev/null || true
  LSM_NODE_PID=""
}
