# shellcheck shell=bash
# How much of a JVM's CPU its JIT compiler takes: the steady-state check of the benchmarks
# (docs/performance.md, "Warm-up"). A node still compiling spends part of its CPU in the C1 and
# C2 compiler threads, and a figure taken then measures the warm-up, not the node. Sourced by
# perf-goals.sh and warmup-time.sh.

# jit_ticks PID...: "COMPILER TOTAL", the clock ticks (user + system) the processes' compiler
# threads and the whole processes have used, from /proc/PID/task/*/stat and /proc/PID/stat.
jit_ticks() {
  local pid compiler=0 total=0 t
  for pid in "$@"; do
    [ -r "/proc/$pid/stat" ] || continue
    total=$((total + $(awk '{ print $14 + $15 }' "/proc/$pid/stat")))
    for t in /proc/"$pid"/task/*; do
      # The thread's name is field 2, in parentheses, and may hold a space ("C2 CompilerThre").
      compiler=$((compiler + $(awk '{ if ($0 ~ /\((C1|C2) CompilerThre/) { sub(/^.*\) /, ""); print $12 + $13 } else print 0 }' \
        "$t/stat" 2>/dev/null || echo 0)))
    done
  done
  echo "$compiler $total"
}

# jit_share BEFORE AFTER: the compiler's share (percent, one decimal) of the CPU used between two
# jit_ticks readings.
jit_share() {
  awk -v b="$1" -v a="$2" 'BEGIN { split(b, x, " "); split(a, y, " "); t = y[2] - x[2];
    if (t > 0) printf "%.1f", 100 * (y[1] - x[1]) / t; else printf "n/a" }'
}

# warm_until_steady STEP_SECONDS MAX_SECONDS COMMAND... : runs COMMAND (a load of STEP_SECONDS,
# given the step's number as its last argument) again and again until the compiler took under 2%
# of the processes' CPU over a step, or MAX_SECONDS passed; the processes are those whose pids
# JIT_PIDS holds. Prints "SECONDS SHARE": when it ended and the last step's share.
warm_until_steady() {
  local step="$1" max="$2" elapsed=0 n=0 before after share="n/a"
  shift 2
  while [ "$elapsed" -lt "$max" ]; do
    n=$((n + 1))
    before="$(jit_ticks $JIT_PIDS)"
    "$@" "$n"
    after="$(jit_ticks $JIT_PIDS)"
    elapsed=$((elapsed + step))
    share="$(jit_share "$before" "$after")"
    if [ "$share" != "n/a" ] && awk -v s="$share" 'BEGIN { exit !(s < 2) }'; then
      break
    fi
  done
  echo "$elapsed $share"
}
