#!/usr/bin/env bash
# Runs a scenario matrix against local QuorumKV clusters and builds a report.
#
#   scripts/loadtest.sh SCENARIO_FILE [--name NAME] [--out DIR] [--only REGEX] [--no-report] [--check]
#
# --check only reads the scenario file: it validates every scenario's columns and settings and
# starts nothing.
# For each scenario line: start a fresh cluster (scripts/cluster.sh), prefill the key space
# (scripts/prefill.sh) when the operation reads, warm up, measure, optionally profile node 1
# with async-profiler in extra runs, stop the cluster. Raw outputs go to
# run/loadtest/NAME/raw/<NN-scenario>/ (NAME defaults to the scenario file's name; an earlier
# run's raw folder of the same name is replaced), then
# io.quorumkv.bench.report.LoadReportBuilder writes docs/reports/NAME/ (or --out).
#
# Scenario file: one scenario per line, '#' starts a comment:
#   name backend nodes replicas op rate duration connections threads [key=value ...]
#   h2-put-1k  h2  1  -  put  1000  30s  16  1  keys=10000 value_size=100 profile=cpu
# replicas: ACK/FROM or '-' for the server default; op: put|get|delete|mixed|range;
# rate: requests/s (wrk2's -R; wrk runs a closed loop, paced near it with lua delay(); 0 = flat
# out); duration: wrk's -d.
# Optional keys: keys (10000), value_size (100), dist (uniform|zipf), zipf_s (0.99),
# read_ratio (mixed, 0.9), range_size (range, 100), placement (rendezvous), warmup
# (seconds, 10), prefill (yes|no; default yes for get, mixed, range and delete),
# count_status (1: count answers by status, costs throughput), profile (cpu,alloc,lock),
# profile_s (seconds of each profiling run; default QKV_PROFILE_SECONDS, else the duration),
# kill (NODE@SECONDS: SIGKILL node NODE, 2..nodes, that many seconds into the measured run),
# restart (SECONDS: start the killed node again that many seconds into the measured run).
# A markdown file beside the scenario file (backends.md for backends.conf) heads the report.
#
# Environment: QKV_TOOL=wrk|wrk2 forces a load generator (default: wrk2 when found, else wrk),
# QKV_WRK2 (path of a wrk2 binary), QKV_BASE_PORT (8081), QKV_JAVA_OPTS (node JVM options),
# QKV_PROFILE_SECONDS (length of each profiling run where the scenario sets no profile_s,
# default: the scenario's duration),
# QKV_PROFILE_CPU_EVENT (itimer; cpu needs perf_events), QKV_ASYNC_PROFILER_LIB (a
# libasyncProfiler.so; default: tools.profiler:async-profiler QKV_ASYNC_PROFILER_VERSION (4.6)
# from Maven Central, unpacked under run/tools/).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SCRIPTS="$ROOT/scripts"
# shellcheck source=scripts/lib/wrk-tool.sh
. "$SCRIPTS/lib/wrk-tool.sh"

die() {
  echo "loadtest.sh: $*" >&2
  exit 1
}

log() {
  echo "[$(date -u +%H:%M:%S)] $*"
}

[ $# -ge 1 ] || die "usage: scripts/loadtest.sh SCENARIO_FILE [--name NAME] [--out DIR] [--only REGEX] [--no-report] [--check]"
scenario_file="$1"
shift
[ -f "$scenario_file" ] || die "no scenario file $scenario_file"
scenario_file="$(cd "$(dirname "$scenario_file")" && pwd)/$(basename "$scenario_file")"
name="$(basename "$scenario_file" .conf)"
out=""
only=""
report=1
check=0
while [ $# -gt 0 ]; do
  case "$1" in
    --name) name="${2:?}"; shift 2 ;;
    --out) out="${2:?}"; shift 2 ;;
    --only) only="${2:?}"; shift 2 ;;
    --no-report) report=0; shift ;;
    --check) check=1; report=0; shift ;;
    *) die "unknown option: $1" ;;
  esac
done
[[ "$name" =~ ^[A-Za-z0-9._-]+$ ]] || die "--name may hold letters, digits, '.', '_' and '-' only"
out="${out:-$ROOT/docs/reports/$name}"

if [ -n "${JAVA_HOME:-}" ]; then JAVA="$JAVA_HOME/bin/java"; else JAVA="$(command -v java || true)"; fi
[ -x "$JAVA" ] || die "no java: set JAVA_HOME to a JDK 25"
[ "$check" = 1 ] || [ -f "$ROOT/service/target/quorumkv.jar" ] ||
  die "service/target/quorumkv.jar is missing: run ./mvnw -DskipTests package first"
if [ "$report" = 1 ] && [ ! -f "$ROOT/jmh/target/benchmarks.jar" ]; then
  die "jmh/target/benchmarks.jar is missing: run ./mvnw -DskipTests package first"
fi
detect_wrk_tool

if [ "$check" = 1 ]; then work="$(mktemp -d)"; else work="$ROOT/run/loadtest/$name"; fi
raw="$work/raw"
cluster_dir="$work/cluster"
base_port="${QKV_BASE_PORT:-8081}"
url="http://127.0.0.1:$base_port"
rm -rf "$raw"
mkdir -p "$raw"

cluster() {
  "$SCRIPTS/cluster.sh" "$@" --dir "$cluster_dir"
}

# The background kill/restart schedule of the running scenario, if any.
fault_pid=""

cleanup() {
  if [ -n "$fault_pid" ]; then
    kill "$fault_pid" 2>/dev/null || true
    wait "$fault_pid" 2>/dev/null || true
  fi
  if [ -f "$cluster_dir/cluster.env" ]; then
    cluster down >/dev/null 2>&1 || true
  fi
  [ "$check" = 0 ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- set-up record ------------------------------------------------------------------------

{
  echo "machine.cpus=$(nproc)"
  echo "machine.cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
  echo "machine.memory=$(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
  echo "machine.kernel=$(uname -sr)"
  echo "java.version=$("$JAVA" -version 2>&1 | head -n 1)"
  echo "git.commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(
    [ -z "$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ] || echo ' (with uncommitted changes)'
  )"
  echo "tool=$WRK_KIND ($WRK_BIN)"
  echo "tool.version=$WRK_VERSION"
  echo "java.opts=${QKV_JAVA_OPTS:--Xms1g -Xmx1g -XX:+UseG1GC -XX:MaxTenuringThreshold=2 -XX:MaxGCPauseMillis=10}"
  echo "scenario.file=${scenario_file#"$ROOT"/}"
  echo "started=$(date -u +%FT%TZ)"
} >"$raw/setup.properties"
cp "$scenario_file" "$raw/scenarios.conf"
# A note next to the scenario file (backends.md beside backends.conf) heads the report.
if [ -f "${scenario_file%.conf}.md" ]; then
  cp "${scenario_file%.conf}.md" "$raw/NOTE.md"
fi
log "load generator: $WRK_KIND ($WRK_VERSION)$([ "$WRK_KIND" = wrk2 ] ||
  echo ' - closed loop, paced near the rate column; latency not corrected for coordinated omission')"

# --- async-profiler -----------------------------------------------------------------------

# shellcheck source=scripts/lib/profiler.sh
. "$ROOT/scripts/lib/profiler.sh"

# --- one scenario -------------------------------------------------------------------------

# The load generator command line (shell-quoted): load_command DURATION RATE CONNS THREADS OP
load_command() {
  local duration="$1" rate="$2" conns="$3" threads="$4" op="$5"
  local -a cmd=("$WRK_BIN" "-t$threads" "-c$conns" "-d$duration")
  if [ "$WRK_KIND" = wrk2 ]; then
    cmd+=("-R$rate" --latency -U)
  else
    cmd+=(--latency)
  fi
  cmd+=(-s "$SCRIPTS/wrk2/$op.lua" "$url")
  printf '%q ' "${cmd[@]}"
}

run_load() {
  local output="$1" seconds="$2" command="$3"
  local ticker
  (
    elapsed=0
    while sleep 10; do
      elapsed=$((elapsed + 10))
      [ "$elapsed" -lt "$seconds" ] && echo "    ... ${elapsed}s of ${seconds}s"
    done
  ) &
  ticker=$!
  local status=0
  eval "$command" >"$output" 2>&1 || status=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  if [ "$status" -ne 0 ]; then
    cat "$output" >&2
    die "the load generator failed ($status): $command"
  fi
  grep '^SUMMARY ' "$output" | sed 's/^/    /' || true
}

to_seconds() {
  case "$1" in
    *ms) echo 1 ;;
    *s) echo "${1%s}" ;;
    *m) echo $((${1%m} * 60)) ;;
    *h) echo $((${1%h} * 3600)) ;;
    *) echo "$1" ;;
  esac
}

# Seconds since a `date +%s%N` time stamp, to a tenth.
seconds_since() {
  awk -v from="$1" -v now="$(date +%s%N)" 'BEGIN { printf "%.1f", (now - from) / 1e9 }'
}

# Sleeps until SECONDS after the time stamp START_NS: sleep_until START_NS SECONDS. The sleep
# runs as a child the TERM trap of the fault schedule can stop.
sleep_until() {
  local left
  left="$(awk -v from="$1" -v at="$2" -v now="$(date +%s%N)" 'BEGIN { printf "%.3f", at - (now - from) / 1e9 }')"
  if awk -v left="$left" 'BEGIN { exit !(left > 0) }'; then
    sleep "$left" &
    fault_child=$!
    wait "$fault_child"
  fi
}

# The kill/restart schedule of a scenario, run in the background of its measured run:
#   fault_schedule ID DIR START_NS NODE KILL_AT [RESTART_AT]
# SIGKILLs node NODE KILL_AT seconds after START_NS (the start of the load generator) and, with
# RESTART_AT, starts it again then. Each step is appended to DIR/events.txt as
# "at_s=SECONDS event=kill|ready|... node=NODE" (the format io.quorumkv.bench.report.FaultEvent
# reads); cluster.sh's output goes to DIR/faults.log. Exits non-zero when a step fails.
fault_schedule() {
  local id="$1" dir="$2" start_ns="$3" node="$4" kill_at="$5" restart_at="${6:-}"
  local events="$dir/events.txt" status=0
  fault_child=""
  trap '[ -z "$fault_child" ] || kill "$fault_child" 2>/dev/null; exit 143' TERM
  echo "# seconds since the start of the measured run (the load generator's start)" >"$events"
  sleep_until "$start_ns" "$kill_at"
  log "[$id] killing node $node (SIGKILL), ${kill_at}s into the measured run"
  echo "at_s=$(seconds_since "$start_ns") event=kill node=$node" >>"$events"
  cluster kill "$node" >>"$dir/faults.log" 2>&1 &
  fault_child=$!
  wait "$fault_child" || status=$?
  if [ "$status" -ne 0 ]; then
    echo "at_s=$(seconds_since "$start_ns") event=kill-failed node=$node" >>"$events"
    log "[$id] could not kill node $node (see $dir/faults.log)"
    exit 1
  fi
  [ -n "$restart_at" ] || exit 0
  sleep_until "$start_ns" "$restart_at"
  log "[$id] restarting node $node, ${restart_at}s into the measured run"
  echo "at_s=$(seconds_since "$start_ns") event=restart node=$node" >>"$events"
  cluster restart "$node" >>"$dir/faults.log" 2>&1 &
  fault_child=$!
  wait "$fault_child" || status=$?
  if [ "$status" -ne 0 ]; then
    echo "at_s=$(seconds_since "$start_ns") event=restart-failed node=$node" >>"$events"
    log "[$id] node $node did not come back (see $dir/faults.log)"
    exit 1
  fi
  echo "at_s=$(seconds_since "$start_ns") event=ready node=$node" >>"$events"
  log "[$id] node $node ready again, $(seconds_since "$start_ns")s into the measured run"
}

# The SUMMARY line's value of KEY in a load generator output: summary_value FILE KEY
summary_value() {
  grep '^SUMMARY ' "$1" | tail -n 1 | sed -n "s/.* $2=\([0-9]*\).*/\1/p"
}

run_scenario() {
  local index="$1" sname="$2" backend="$3" nodes="$4" replicas="$5" op="$6" rate="$7" duration="$8"
  local conns="$9" threads="${10}"
  shift 10
  local keys=10000 value_size=100 dist=uniform zipf_s=0.99 read_ratio=0.9 range_size=100
  local placement=rendezvous warmup=10 prefill="" count_status=0 profile="" profile_s="" kill="" restart=""
  local kv key value
  for kv in "$@"; do
    key="${kv%%=*}"
    value="${kv#*=}"
    case "$key" in
      keys | value_size | dist | zipf_s | read_ratio | range_size | placement | warmup | prefill | count_status | \
        profile | profile_s | kill | restart)
        printf -v "$key" '%s' "$value" ;;
      *) die "$sname: unknown setting '$key'" ;;
    esac
  done
  case "$op" in put | get | delete | mixed | range) ;; *) die "$sname: unknown op $op" ;; esac
  case "$backend" in lsm | h2 | derby) ;; *) die "$sname: backend must be lsm, h2 or derby, not $backend" ;; esac
  [[ "$nodes" =~ ^[1-9][0-9]*$ ]] || die "$sname: nodes must be a positive number, not $nodes"
  [ "$replicas" = - ] || [[ "$replicas" =~ ^[1-9][0-9]*/[1-9][0-9]*$ ]] ||
    die "$sname: replicas must be ACK/FROM or -, not $replicas"
  case "$dist" in uniform | zipf) ;; *) die "$sname: dist must be uniform or zipf, not $dist" ;; esac
  case "$placement" in rendezvous | consistent-hash) ;;
    *) die "$sname: placement must be rendezvous or consistent-hash, not $placement" ;;
  esac
  local profiled
  for profiled in ${profile//,/ }; do
    case "$profiled" in cpu | alloc | lock) ;; *) die "$sname: profile events are cpu, alloc and lock, not $profiled" ;; esac
  done
  [ -z "$profile_s" ] || [[ "$profile_s" =~ ^[1-9][0-9]*$ ]] || die "$sname: profile_s=SECONDS, not profile_s=$profile_s"
  [[ "$rate" =~ ^[0-9]+$ ]] || die "$sname: rate must be a number"
  if [ "$WRK_KIND" = wrk2 ] && [ "$rate" = 0 ]; then
    die "$sname: wrk2 needs a rate above 0 (0 means flat out, which only plain wrk does: QKV_TOOL=wrk)"
  fi
  if [ -z "$prefill" ]; then
    case "$op" in put) prefill=no ;; *) prefill=yes ;; esac
  fi
  # kill=NODE@SECONDS [restart=SECONDS]: a fault during the measured run. Node 1 takes the
  # load and coordinates every request, so only the other nodes may be killed.
  local kill_node="" kill_at="" duration_s
  duration_s="$(to_seconds "$duration")"
  if [ -n "$kill" ]; then
    [[ "$kill" =~ ^([0-9]+)@([0-9]+)$ ]] || die "$sname: kill=NODE@SECONDS, such as kill=3@20, not kill=$kill"
    kill_node="${BASH_REMATCH[1]}"
    kill_at="${BASH_REMATCH[2]}"
    [ "$nodes" -ge 2 ] || die "$sname: kill needs at least 2 nodes (node 1 takes the load)"
    if [ "$kill_node" -lt 2 ] || [ "$kill_node" -gt "$nodes" ]; then
      die "$sname: kill=$kill: NODE must be 2..$nodes (node 1 takes the load and coordinates every request)"
    fi
    [ "$kill_at" -lt "$duration_s" ] || die "$sname: kill=$kill: the kill must fall within the ${duration_s}s run"
    [ -z "$profile" ] ||
      die "$sname: kill and profile do not mix (the profiling runs repeat the load on the changed cluster): profile another scenario"
    if [ "$WRK_KIND" = wrk2 ] && [ "$kill_at" -le 10 ]; then
      log "[$sname] note: wrk2 resets its latency histogram after its first ~10s (calibration); a kill at ${kill_at}s may fall before it"
    fi
  fi
  if [ -n "$restart" ]; then
    [ -n "$kill" ] || die "$sname: restart=$restart needs kill=NODE@SECONDS"
    [[ "$restart" =~ ^[0-9]+$ ]] || die "$sname: restart=SECONDS, not restart=$restart"
    if [ "$restart" -le "$kill_at" ] || [ "$restart" -ge "$duration_s" ]; then
      die "$sname: restart=$restart must fall after the kill (${kill_at}s) and within the ${duration_s}s run"
    fi
  fi
  if [ "$check" = 1 ]; then
    log "[$sname] ok: $backend, $nodes node(s), replicas $replicas, $op at ${rate}/s for $duration${kill:+, kill=$kill}${restart:+ restart=$restart}${profile:+, profile=$profile}"
    return 0
  fi
  local id
  id="$(printf '%02d' "$index")-$sname"
  local dir="$raw/$id"
  mkdir -p "$dir"
  {
    echo "name=$sname"
    echo "backend=$backend"
    echo "nodes=$nodes"
    echo "replicas=$replicas"
    echo "op=$op"
    echo "rate=$rate"
    echo "duration=$duration"
    echo "connections=$conns"
    echo "threads=$threads"
    echo "keys=$keys"
    echo "value_size=$value_size"
    echo "dist=$dist"
    [ "$dist" != zipf ] || echo "zipf_s=$zipf_s"
    [ "$op" != mixed ] || echo "read_ratio=$read_ratio"
    [ "$op" != range ] || echo "range_size=$range_size"
    echo "placement=$placement"
    echo "warmup_s=$warmup"
    echo "prefill=$prefill"
    echo "tool=$WRK_KIND"
    [ "$WRK_KIND" != wrk ] || [ "$rate" = 0 ] || echo "paced=yes"
    [ -z "$kill" ] || echo "kill=$kill"
    [ -z "$restart" ] || echo "restart=$restart"
  } >"$dir/scenario.properties"

  export QKV_KEYS="$keys" QKV_VALUE_SIZE="$value_size" QKV_DIST="$dist" QKV_ZIPF_S="$zipf_s"
  export QKV_READ_RATIO="$read_ratio" QKV_RANGE_SIZE="$range_size" QKV_COUNT_STATUS="$count_status"
  # wrk has no constant rate: pace its closed loop near the rate (0: flat out).
  if [ "$WRK_KIND" = wrk ]; then
    export QKV_PACE_RATE="$rate" QKV_PACE_CONNECTIONS="$conns"
  else
    export QKV_PACE_RATE=0
  fi
  if [ "$replicas" = - ]; then export QKV_REPLICAS=""; else export QKV_REPLICAS="$replicas"; fi

  log "[$id] $backend, $nodes node(s), $op at ${rate}/s for $duration, $conns connections, replicas $replicas"
  cluster up --insecure --fresh --nodes "$nodes" --backend "$backend" --placement "$placement" --base-port "$base_port" |
    sed 's/^/    /'
  if [ "$prefill" = yes ]; then
    log "[$id] prefill: $keys keys"
    QKV_COUNT_STATUS=1 "$SCRIPTS/prefill.sh" "$url" --keys "$keys" >"$dir/prefill.txt" 2>&1 ||
      { cat "$dir/prefill.txt" >&2; die "$id: prefill failed"; }
  fi
  local env_prefix
  env_prefix="$(printf '%s ' QKV_KEYS="$keys" QKV_VALUE_SIZE="$value_size" QKV_DIST="$dist")"
  [ "$dist" != zipf ] || env_prefix+="QKV_ZIPF_S=$zipf_s "
  [ "$op" != mixed ] || env_prefix+="QKV_READ_RATIO=$read_ratio "
  [ "$op" != range ] || env_prefix+="QKV_RANGE_SIZE=$range_size "
  [ -z "$QKV_REPLICAS" ] || env_prefix+="QKV_REPLICAS=$QKV_REPLICAS "
  [ "$count_status" != 1 ] || env_prefix+="QKV_COUNT_STATUS=1 "
  [ "$QKV_PACE_RATE" = 0 ] || env_prefix+="QKV_PACE_RATE=$rate QKV_PACE_CONNECTIONS=$conns "
  if [ "$warmup" != 0 ]; then
    log "[$id] warm-up: ${warmup}s"
    run_load "$dir/warmup.txt" "$warmup" "$(load_command "${warmup}s" "$rate" "$conns" "$threads" "$op")"
  fi
  local command
  command="$(load_command "$duration" "$rate" "$conns" "$threads" "$op")"
  echo "$env_prefix${command//"$SCRIPTS"/scripts}" >"$dir/command.txt"
  log "[$id] measuring ($WRK_KIND): $(cat "$dir/command.txt")"
  if [ -n "$kill" ]; then
    log "[$id] fault: kill node $kill_node at ${kill_at}s${restart:+, restart it at ${restart}s}"
    fault_schedule "$id" "$dir" "$(date +%s%N)" "$kill_node" "$kill_at" "$restart" &
    fault_pid=$!
  fi
  run_load "$dir/measure.txt" "$duration_s" "$command"
  if [ -n "$fault_pid" ]; then
    # A restart may still be waiting for the node to be ready.
    local fault_status=0
    wait "$fault_pid" || fault_status=$?
    fault_pid=""
    [ "$fault_status" -eq 0 ] || die "$id: the kill/restart schedule failed: $(tail -n 5 "$dir/faults.log" 2>/dev/null)"
    log "[$id] over the run with its fault, $WRK_KIND counted $(summary_value "$dir/measure.txt" non2xx) non-2xx," \
      "$(summary_value "$dir/measure.txt" connect)/$(summary_value "$dir/measure.txt" read)/$(
        summary_value "$dir/measure.txt" write) connect/read/write errors," \
      "$(summary_value "$dir/measure.txt" timeout) timeouts"
  fi

  if [ -n "$profile" ]; then
    ensure_profiler
    local event pid ap_event profile_duration="${profile_s:-${QKV_PROFILE_SECONDS:-$duration_s}}"
    local -a events
    IFS=, read -r -a events <<<"$profile"
    pid="$(cat "$cluster_dir/node1/node.pid")"
    for event in "${events[@]}"; do
      case "$event" in
        cpu) ap_event="${QKV_PROFILE_CPU_EVENT:-itimer}" ;;
        alloc | lock) ap_event="$event" ;;
        *) die "$id: profile events are cpu, alloc and lock, not $event" ;;
      esac
      log "[$id] profiling node 1 ($event, event=$ap_event) for ${profile_duration}s"
      profiler_command "$pid" "start,event=$ap_event" >"$dir/profile-$event.log" 2>&1 ||
        { cat "$dir/profile-$event.log" >&2; die "$id: could not start async-profiler"; }
      run_load "$dir/profile-$event.txt" "$profile_duration" \
        "$(load_command "${profile_duration}s" "$rate" "$conns" "$threads" "$op")"
      profiler_command "$pid" "stop,file=$dir/flame-$event.html,title=$id-$event" >>"$dir/profile-$event.log" 2>&1 ||
        { cat "$dir/profile-$event.log" >&2; die "$id: could not stop async-profiler"; }
    done
  fi
  cluster down | sed 's/^/    /'
  for log_file in "$cluster_dir"/node*/node.log; do
    cp "$log_file" "$dir/$(basename "$(dirname "$log_file")").log"
  done
}

# --- the matrix ---------------------------------------------------------------------------

index=0
ran=0
while read -r -a fields || [ ${#fields[@]} -gt 0 ]; do
  [ ${#fields[@]} -gt 0 ] || continue
  [[ "${fields[0]}" != \#* ]] || continue
  index=$((index + 1))
  [ ${#fields[@]} -ge 9 ] || die "$scenario_file: scenario $index needs 9 columns: name backend nodes replicas op rate duration connections threads"
  if [ -n "$only" ] && ! [[ "${fields[0]}" =~ $only ]]; then
    continue
  fi
  run_scenario "$index" "${fields[@]}" </dev/null
  ran=$((ran + 1))
done <"$scenario_file"
[ "$ran" -gt 0 ] || die "no scenario ran (file empty, or --only matched none)"

if [ "$report" = 1 ]; then
  log "building the report: $out"
  "$JAVA" -Djava.awt.headless=true -cp "$ROOT/jmh/target/benchmarks.jar" io.quorumkv.bench.report.LoadReportBuilder \
    --name "$name" --raw "$raw" --out "$out"
fi
if [ "$check" = 1 ]; then
  log "checked: $ran scenario(s), no cluster started"
else
  log "done: raw outputs in ${raw#"$ROOT"/}"
fi
