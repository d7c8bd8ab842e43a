# shellcheck shell=bash disable=SC2034
# Finds the load generator, sourced by loadtest.sh and prefill.sh. Sets:
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
