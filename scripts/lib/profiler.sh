# async-profiler for the scripts that profile a running JVM (sourced; needs ROOT, JAVA, log and
# die). ensure_profiler sets profiler_lib: QKV_ASYNC_PROFILER_LIB, or the library of
# tools.profiler:async-profiler QKV_ASYNC_PROFILER_VERSION (4.6) from Maven Central, extracted once
# under run/tools/.
profiler_lib=""

ensure_profiler() {
  [ -z "$profiler_lib" ] || return 0
  if [ -n "${QKV_ASYNC_PROFILER_LIB:-}" ]; then
    profiler_lib="$QKV_ASYNC_PROFILER_LIB"
  else
    local version="${QKV_ASYNC_PROFILER_VERSION:-4.6}" tools jar
    tools="$ROOT/run/tools/async-profiler-$version"
    profiler_lib="$tools/linux-x64/libasyncProfiler.so"
    if [ ! -f "$profiler_lib" ]; then
      log "fetching tools.profiler:async-profiler:$version from Maven Central"
      mkdir -p "$tools"
      (cd "$ROOT" && ./mvnw -q dependency:copy -Dartifact="tools.profiler:async-profiler:$version" \
        -DoutputDirectory="$tools" >"$tools/fetch.log" 2>&1) ||
        { cat "$tools/fetch.log" >&2; die "could not fetch async-profiler $version"; }
      jar="$tools/async-profiler-$version.jar"
      (cd "$tools" && "$(dirname "$JAVA")/jar" xf "$jar" linux-x64/libasyncProfiler.so)
    fi
  fi
  [ -f "$profiler_lib" ] || die "no async-profiler library at $profiler_lib"
}

# Loads async-profiler into a running node and passes it a command ("start,event=..." or
# "stop,file=..."). jcmd splits its arguments at '=', so the options go in double quotes.
profiler_command() {
  local pid="$1" options="$2" output
  output="$("$(dirname "$JAVA")/jcmd" "$pid" JVMTI.agent_load "$profiler_lib" "\"$options\"" 2>&1)" || true
  echo "$output"
  grep -q 'return code: 0' <<<"$output"
}
