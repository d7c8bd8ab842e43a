# shellcheck shell=bash
# The CPU each node of a local cluster, the load generator and the machine as a whole used
# in each window of a benchmark; sourced by join-bench.sh. cpu_sampler records, cpu_windows
# reports.

# cpu_sampler DIR OUT SECONDS [NAME...]: every second for at most SECONDS, appends to OUT
# "MS LABEL PID TICKS" for each running node (label nodeN: its JVM's user + system clock
# ticks, from /proc/PID/stat) and each process named NAME (pgrep -x; label NAME), and
# "MS machine 0 BUSY TOTAL" (the ticks of every core, from /proc/stat). Meant for the
# background; stops when killed or after SECONDS.
cpu_sampler() {
  local dir="$1" out="$2" seconds="$3" i pidfile pid name ms
  shift 3
  for ((i = 0; i < seconds; i++)); do
    ms=$(date +%s%3N)
    {
      for pidfile in "$dir"/node[0-9]*/node.pid; do
        [ -f "$pidfile" ] || continue
        pid=$(cat "$pidfile" 2> /dev/null) || continue
        cpu_ticks "$ms" "$(basename "$(dirname "$pidfile")")" "$pid"
      done
      for name in "$@"; do
        for pid in $(pgrep -x "$name" || true); do
          cpu_ticks "$ms" "$name" "$pid"
        done
      done
      # cpu user nice system idle iowait irq softirq steal: busy = all but idle and iowait.
      awk -v ms="$ms" '$1 == "cpu" { total = 0; for (f = 2; f <= 9; f++) total += $f
        print ms, "machine", 0, total - $5 - $6, total; exit }' /proc/stat
    } >> "$out"
    sleep 1
  done
}

# cpu_ticks MS LABEL PID: one sample line of a process; nothing when it has ended.
cpu_ticks() {
  awk -v ms="$1" -v label="$2" -v pid="$3" '{ print ms, label, pid, $14 + $15 }' "/proc/$3/stat" 2> /dev/null || true
}

# cpu_windows OUT LABEL:FILE...: for each label in OUT and each window (FILE holds
# "FROM_MS TO_MS"), the cores its processes used on average over the window (each
# process from its first to its last sample inside it); for the machine, the busy share of
# its cores. One line per label.
cpu_windows() {
  local out="$1" name spec label file from to line
  shift
  [ -s "$out" ] || return 0
  for name in $(awk '{ print $2 }' "$out" | sort -u); do
    line="$name"
    for spec in "$@"; do
      label="${spec%%:*}" file="${spec#*:}"
      [ -f "$file" ] || continue
      read -r from to < "$file"
      line+=" | $label $(awk -v name="$name" -v from="$from" -v to="$to" -v hz="$(getconf CLK_TCK)" '
        $2 == name && $1 >= from && $1 <= to {
          if (!($3 in first)) { first[$3] = $4; total0[$3] = $5 }
          last[$3] = $4; total1[$3] = $5
          if (!t0) t0 = $1
          t1 = $1
        }
        END {
          if (t1 == t0) { printf "no samples"; exit }
          for (p in first) { used += last[p] - first[p]; all += total1[p] - total0[p] }
          if (name == "machine") printf "%.0f%% busy", (all ? used / all * 100 : 0)
          else printf "%.2f cores", used / hz / ((t1 - t0) / 1000)
        }' "$out")"
    done
    echo "$line"
  done
}
