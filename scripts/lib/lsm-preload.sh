# shellcheck shell=bash
# Fills the LSM data folders of a local cluster that scripts/cluster.sh has not started yet,
# straight through the storage API (io.quorumkv.bench.LsmLoader), instead of through HTTP: ten
# million entries load in minutes rather than the better part of an hour. Sourced by
# scripts/lib/cluster-bench.sh (repair-bench.sh, join-bench.sh). Needs jmh/target/benchmarks.jar.

# preload_replicas DIR NODES KEYS VALUE_BYTES: a fresh DIR whose node1..NODES each hold the
# same KEYS entries (keys k0000000000.., as scripts/wrk2/*.lua name them, random values, one
# timestamp: the loader's start), in DIR/node<i>/data/data, where scripts/cluster.sh points
# each node's quorumkv.storage.path/data. Identical copies are replicas that agree: with RF
# equal to the node count every node owns every key. Prints the loader's summary lines.
preload_replicas() {
  local dir="$1" nodes="$2" keys="$3" value_bytes="$4" i
  local jar="$ROOT/jmh/target/benchmarks.jar"
  [ -f "$jar" ] || { echo "no $jar (./mvnw -o -q package -DskipTests -pl service,jmh -am)" >&2; return 1; }
  rm -rf "$dir"
  mkdir -p "$dir/node1/data"
  "${JAVA_HOME:+$JAVA_HOME/bin/}java" -cp "$jar" io.quorumkv.bench.LsmLoader \
    "$dir/node1/data/data" "$keys" "$value_bytes" random >"$dir/loader.log" 2>&1 \
    || { tail -n 20 "$dir/loader.log" >&2; return 1; }
  grep '^loader: ' "$dir/loader.log" | tail -n 3
  for ((i = 2; i <= nodes; i++)); do
    mkdir -p "$dir/node$i/data"
    cp -r "$dir/node1/data/data" "$dir/node$i/data/data"
  done
}
