# QuorumKV node image, from Spring Boot's layered jar: the dependencies (which change seldom) and the
# application (which changes with every build) are layers of their own, so a new build ships only its
# own classes. Build the jar first, then the image (docs/kubernetes.md):
#
#   ./mvnw -DskipTests package
#   docker build -t quorumkv:0.1.0 .
#
# The node runs as an unprivileged user, keeps its data in the volume /data, serves the API on 8080
# and Actuator on 9080 (management.server.port), and takes JVM flags from JAVA_OPTS and every setting
# from the environment (QUORUMKV_CLUSTER_NODES, QUORUMKV_CLUSTER_SECRET, ...). SIGTERM starts a
# graceful shutdown. The image's start command is deploy/docker/entrypoint.sh, which
# DockerEntrypointIT runs against the extracted layers exactly as below.
ARG JAVA_IMAGE=eclipse-temurin:25-jre

FROM ${JAVA_IMAGE} AS layers
WORKDIR /build
COPY service/target/quorumkv.jar quorumkv.jar
RUN java -Djarmode=tools -jar quorumkv.jar extract --layers --destination extracted

FROM ${JAVA_IMAGE}
RUN groupadd --system --gid 10001 quorumkv \
 && useradd --system --uid 10001 --gid quorumkv --home-dir /app --no-create-home quorumkv \
 && mkdir -p /data \
 && chown quorumkv:quorumkv /data
WORKDIR /app
COPY --from=layers /build/extracted/dependencies/ ./
COPY --from=layers /build/extracted/spring-boot-loader/ ./
COPY --from=layers /build/extracted/snapshot-dependencies/ ./
COPY --from=layers /build/extracted/application/ ./
COPY deploy/docker/entrypoint.sh ./entrypoint.sh
# An AOT cache (Java 25, JEP 483/514/515) from a training run that starts the node, serves a short
# workload through its own front door (quorumkv.aot-training: writes, reads, a range, deletes) and
# exits: the classes loaded and linked then, and the methods' profiles, are mapped at start instead.
# Measured on the 2-core build machine, to the end of the context refresh: 6.0/9.1/7.4 s with it
# against 12.0/14.7/17.9 s without, alternated (docs/kubernetes.md). The entry point uses it when
# present and matching.
RUN java -XX:AOTCacheOutput=quorumkv.aot -Dquorumkv.aot-training=true -jar quorumkv.jar \
      --quorumkv.storage.path=/tmp/aot-training --server.port=0 --management.server.port=0 \
 && rm -rf /tmp/aot-training
# The heap starts at its maximum (InitialRAMPercentage = MaxRAMPercentage): a heap G1 sized small
# under a light start marks continuously once the node holds its share of the keys. Objects
# that survive two young collections are promoted: a memtable's keys live until its flush, and
# copied up to 15 times they made most of a young pause; a pause goal of 10 ms keeps the young
# generation small enough that each pause stays short (docs/performance.md, "Collectors").
# A container listens on every interface (a node alone listens on loopback), so clients must
# authenticate: give API keys (QUORUMKV_SECURITY_APIKEYS_<NAME>_SHA256 and _ACCESS, or a file,
# docs/security.md) and TLS (SPRING_SSL_BUNDLE_*, SERVER_SSL_BUNDLE); the node's startup line says
# which of them it has. QUORUMKV_SECURITY_PUBLIC_API=open opens the API to anyone who reaches it.
ENV QUORUMKV_STORAGE_PATH=/data \
    SERVER_ADDRESS=0.0.0.0 \
    SERVER_PORT=8080 \
    MANAGEMENT_SERVER_ADDRESS=0.0.0.0 \
    MANAGEMENT_SERVER_PORT=9080 \
    QUORUMKV_SECURITY_PUBLIC_API=authenticated \
    JAVA_OPTS="-XX:InitialRAMPercentage=75 -XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError -XX:MaxTenuringThreshold=2 -XX:MaxGCPauseMillis=10"
VOLUME /data
EXPOSE 8080 9080
USER 10001:10001
ENTRYPOINT ["sh", "/app/entrypoint.sh"]
