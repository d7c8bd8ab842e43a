#!/usr/bin/env bash
# Writes every key of the key space once, in order, so that get.lua, mixed.lua and range.lua
# find them: runs put.lua in sequential mode (QKV_DIST=sequential) with wrk (or wrk2) in rounds
# until all keys are written.
#
#   scripts/prefill.sh URL [--keys N] [--connections C] [--round-seconds S] [--timeout S]
#
# The lua settings come from the environment as for the scripts (QKV_KEY_PREFIX,
# QKV_VALUE_SIZE, QKV_REPLICAS, ...; see scripts/wrk2/common.lua); --keys sets QKV_KEYS
# (default: QKV_KEYS or 10000). With wrk2 each round runs at QKV_PREFILL_RATE requests/s
# (default 5000). Exits non-zero when the keys are not all written within --timeout seconds
# (default 600). A round with errors or non-2xx answers (an overloaded node's 503 or 504) is
# written again with half the connections, up to 5 times.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib/wrk-tool.sh
. "$HERE/lib/wrk-tool.sh"

die() {
  echo "prefill.sh: $*" >&2
  exit 1
}

[ $# -ge 1 ] || die "usage: scripts/prefill.sh URL [--keys N] [--connections C] [--round-seconds S] [--timeout S]"
url="$1"
shift
keys="${QKV_KEYS:-10000}"
connections=8
failures=0
round_seconds=15
timeout=600
while [ $# -gt 0 ]; do
  case "$1" in
    --keys) keys="${2:?}"; shift 2 ;;
    --connections) connections="${2:?}"; shift 2 ;;
    --round-seconds) round_seconds="${2:?}"; shift 2 ;;
    --timeout) timeout="${2:?}"; shift 2 ;;
    *) die "unknown option: $1" ;;
  esac
done
[[ "$keys" =~ ^[1-9][0-9]*$ ]] || die "--keys must be a positive number"
[[ "$connections" =~ ^[1-9][0-9]*$ ]] || die "--connections must be a positive number"

detect_wrk_tool
rate_args=()
if [ "$WRK_KIND" = wrk2 ]; then
  rate_args=(-R "${QKV_PREFILL_RATE:-5000}")
fi

start=0
deadline=$((SECONDS + timeout))
while [ "$start" -lt "$keys" ]; do
  [ "$SECONDS" -lt "$deadline" ] || die "only keys below $start of $keys written within ${timeout}s"
  # One thread, so the walk is in key order and `issued` tells where it stopped.
  output="$(QKV_KEYS="$keys" QKV_DIST=sequential QKV_SEQ_START="$start" QKV_THREADS=1 \
    "$WRK_BIN" -t1 -c"$connections" -d"${round_seconds}s" "${rate_args[@]}" \
    -s "$HERE/wrk2/put.lua" "$url")" || die "$WRK_BIN failed: $output"
  summary="$(grep '^SUMMARY ' <<<"$output" | tail -n 1)"
  [ -n "$summary" ] || die "no SUMMARY line in the output: $output"
  issued="$(sed -n 's/.* issued=\([0-9]*\).*/\1/p' <<<"$summary")"
  non2xx="$(sed -n 's/.* non2xx=\([0-9]*\).*/\1/p' <<<"$summary")"
  errors="$(sed -n 's/.* sock_errors=\([0-9]*\).*/\1/p' <<<"$summary")"
  if [ "${non2xx:-0}" != 0 ] || [ "${errors:-0}" != 0 ]; then
    # Some writes failed (a 504 or 503 of an overloaded node, a timeout): which ones is not
    # known, so the round is written again, with half the connections.
    failures=$((failures + 1))
    [ "$failures" -le 5 ] || die "the prefill still fails after 5 retries: $summary"
    connections=$(((connections + 1) / 2))
    echo "prefill: $non2xx non-2xx answers and $errors socket errors from key $start on;" \
      "writing them again with $connections connection(s)"
    continue
  fi
  tail_s="$(sed -n 's/.* tail_s=\([0-9]*\).*/\1/p' <<<"$summary")"
  # The walk reached the last key and then sent only status requests for longer than wrk's
  # 2 s request timeout: with no timeouts reported, every PUT was answered.
  if [ -n "$tail_s" ] && [ "$tail_s" -ge 3 ]; then
    echo "prefill: keys $start..$((keys - 1)) written ($summary)"
    break
  fi
  # Otherwise the last requests may have been cut off when wrk stopped: write them again.
  next=$((start + issued - connections))
  [ "$next" -gt "$start" ] || next=$((start + 1))
  echo "prefill: keys $start..$((next - 1)) of $keys written, continuing"
  start=$next
done
