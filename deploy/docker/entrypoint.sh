#!/bin/sh
# Starts a QuorumKV node from the extracted layers of its jar (the folder this script is in):
# quorumkv.jar and lib/. JVM flags come from JAVA_OPTS, node settings from the environment
# (QUORUMKV_*, SERVER_PORT, MANAGEMENT_SERVER_PORT, SPRING_SSL_BUNDLE_*) or from the arguments.
# exec: the JVM becomes the container's main process and gets SIGTERM itself (graceful shutdown).
# The AOT cache of the image build, when there is one (a JVM that cannot use it says so and
# starts without it).
set -eu
cd "$(dirname "$0")"
aot=""
[ ! -f quorumkv.aot ] || aot="-XX:AOTCache=quorumkv.aot"
# shellcheck disable=SC2086 # JAVA_OPTS is a list of flags
exec java ${JAVA_OPTS:-} $aot -jar quorumkv.jar "$@"
