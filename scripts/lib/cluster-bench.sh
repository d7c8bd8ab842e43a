# shellcheck shell=bash
# What repair-bench.sh and join-bench.sh share: their common options, the constant-rate load
# generator (scripts/lib/wrk-tool.sh) and the loader of the nodes' data folders
# (scripts/lib/lsm-preload.sh). Needs ROOT set to the repository.
# shellcheck source=scripts/lib/wrk-tool.sh
. "$ROOT/scripts/lib/wrk-tool.sh"
# shellcheck source=scripts/lib/lsm-preload.sh
. "$ROOT/scripts/lib/lsm-preload.sh"

# bench_defaults NAME PORT: 1,000,000 keys, 1,000 requests/s, 60 s, run/NAME, base port PORT.
bench_defaults() {
  keys=1000000
  rate=1000
  seconds=60
  dir="$ROOT/run/$1"
  port="$2"
}

# bench_option OPTION VALUE: sets a common option (--keys, --rate, --seconds, --dir,
# --base-port); status 1 for any other, which the script then handles itself.
bench_option() {
  case "$1" in
    --keys) keys="${2:?--keys needs a value}" ;;
    --rate) rate="${2:?--rate needs a value}" ;;
    --seconds) seconds="${2:?--seconds needs a value}" ;;
    --dir) dir="${2:?--dir needs a value}" ;;
    --base-port) port="${2:?--base-port needs a value}" ;;
    *) return 1 ;;
  esac
}

# bench_wrk2: sets wrk2 to the constant-rate load generator, or exits saying how to get one.
bench_wrk2() {
  QKV_TOOL=wrk2 detect_wrk_tool || exit 1
  wrk2="$WRK_BIN"
}
