# shellcheck shell=bash disable=SC2034
# Finds the load generator and reads its outputs; sourced by loadtest.sh, prefill.sh,
# perf-goals.sh, compare-nodes.sh and lib/cluster-bench.sh. detect_wrk_tool sets:
#   WRK_BIN      the binary
#   WRK_KIND     wrk2 (constant rate, -R) or wrk (closed loop)
#   WRK_VERSION  its version line
# Order: $QKV_WRK2 (a wrk2 binary), `wrk2` on PATH, a `wrk` on PATH that is wrk2 (giltene/wrk2
# builds a binary named wrk; it knows --rate), then plain wrk. QKV_TOOL=wrk forces plain wrk
# (wrk then must be wg/wrk), QKV_TOOL=wrk2 requires wrk2.

is_wrk2() {
  local help
  # wrk and wrk2 exit non-zero after printing their usage.
  help="$("$1" --help 2>&1 || true)"
  grep -q -- '--rate' <<<"$help"
}

detect_wrk_tool() {
  local candidate
  WRK_BIN=""
  WRK_KIND=""
  if [ "${QKV_TOOL:-}" != wrk ]; then
    for candidate in "${QKV_WRK2:-}" "$(command -v wrk2 || true)" "$(command -v wrk || true)"; do
      if [ -n "$candidate" ] && [ -x "$candidate" ] && is_wrk2 "$candidate"; then
        WRK_BIN="$candidate"
        WRK_KIND=wrk2
        break
      fi
    done
  fi
  if [ -z "$WRK_BIN" ] && [ "${QKV_TOOL:-}" != wrk2 ]; then
    candidate="$(command -v wrk || true)"
    if [ -n "$candidate" ] && ! is_wrk2 "$candidate"; then
      WRK_BIN="$candidate"
      WRK_KIND=wrk
    fi
  fi
  if [ -z "$WRK_BIN" ]; then
    echo "No load generator found${QKV_TOOL:+ (QKV_TOOL=$QKV_TOOL)}: install wrk (apt-get install wrk) or build" \
      "giltene/wrk2 from source and put it on PATH (see docs/load-testing.md)." >&2
    return 1
  fi
  WRK_VERSION="$("$WRK_BIN" -v 2>&1 | head -n 1 || true)"
}

# wrk_rps FILE: the requests per second of a wrk or wrk2 output, as an integer
wrk_rps() { awk '/^Requests\/sec:/ { printf "%d", $2 }' "$1"; }

# wrk_pct FILE P: latency percentile P (50, 99, 99.9, 100) in ms from the first latency
# distribution of a wrk output ("99%") or wrk2 output ("99.000%", the corrected one)
wrk_pct() {
  awk -v p="$2" '
    function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /m$/) return v * 60000; if (v ~ /s$/) return v * 1000; return v }
    /Latency Distribution/ { on = 1; next }
    on && $1 == p "%" { printf "%.2f", ms($2); exit }
    on && $1 == sprintf("%.3f%%", p) { printf "%.2f", ms($2); exit }' "$1"
}

# host_speed: how long a fixed CPU loop (20 million awk additions) takes, three times, as
# "min-max ms". On a shared or virtual machine the neighbours' load slows every figure of a
# run; this one shows it (on the development machine the fastest of the three takes ~310-360 ms
# on a calm host, 500 ms and more on a busy one). Compare it between runs of one machine only.
host_speed() {
  local i start end t min="" max=""
  for i in 1 2 3; do
    start=$(date +%s%N)
    awk 'BEGIN { for (i = 0; i < 20000000; i++) s += i }'
    end=$(date +%s%N)
    t=$(((end - start) / 1000000))
    if [ -z "$min" ] || [ "$t" -lt "$min" ]; then min=$t; fi
    if [ -z "$max" ] || [ "$t" -gt "$max" ]; then max=$t; fi
  done
  echo "${min}-${max} ms"
}
