package io.quorumkv.service.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.quorumkv.service.support.Eventually;
import io.quorumkv.service.support.TestCluster;
import io.quorumkv.service.support.TestKeys;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code scripts/qkv} against a running two-node cluster, as an operator runs it. */
class QkvScriptTest {

	static final Path SCRIPT = Path.of("..", "scripts", "qkv").toAbsolutePath().normalize();

	@TempDir
	static Path data;

	static TestCluster cluster;

	@BeforeAll
	static void start() {
		Map<String, String> properties = new java.util.HashMap<>(TestKeys.properties());
		properties.put("management.endpoints.web.exposure.include", "health,prometheus,quorumkv");
		cluster = new TestCluster(data, 2, properties).startAll();
		cluster.client(0)
			.put()
			.uri("/v0/entity?id=k&replicas=2/2")
			.bodyValue("v".getBytes())
			.exchange()
			.expectStatus()
			.isCreated();
	}

	@AfterAll
	static void stop() {
		if (cluster != null) {
			cluster.close();
		}
	}

	@Test
	void statusPrintsATablePerNode() {
		// The SEEN column is the leader's view of who is up: on a loaded machine a missed
		// heartbeat shows the peer "down" for a moment, so the table is read until the
		// view says up (bounded).
		Eventually.eventually(Duration.ofSeconds(20), () -> {
			Result result = status();
			assertThat(result.exit()).as(result.output()).isZero();
			assertThat(result.output()).contains("node " + cluster.url(0) + ": placement rendezvous, backend lsm")
				.contains("node " + cluster.url(1) + ": placement rendezvous, backend lsm")
				.containsPattern("NODE +STATE +SEEN +BREAKER +LAST +IN-FLIGHT +P50-MS +P99-MS +MEAN-MS +HINTS +OWNS")
				.containsPattern(cluster.url(0) + " +self ")
				.containsPattern(cluster.url(1)
						+ " +up +(-|up [0-9.]+s) +CLOSED +success +0/\\d+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +0 +\\d+\\.\\d%");
		});
	}

	private static Result status() {
		try {
			return qkv("--nodes", nodes(), "status");
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	@Test
	void otherViewsAndActions() throws Exception {
		Path dir = data.resolve("run");
		Files.createDirectories(dir);
		Files.writeString(dir.resolve("nodes"), cluster.url(0) + "\n" + cluster.url(1) + "\n");
		Files.writeString(dir.resolve("admin-key"), TestKeys.ADMIN);
		Result ring = qkvWithKey(null, "--cluster-dir", dir.toString(), "ring");
		assertThat(ring.exit()).isZero();
		assertThat(ring.output()).containsPattern("NODE +URL +STATE +FROM=1 +FROM=2")
			.containsPattern(cluster.url(1) + " +" + cluster.url(1) + " +normal +\\d")
			.contains("epoch 1, replication factor 2");
		assertThat(qkv("--nodes", nodes(), "hints").output()).contains("hints pending 0").contains("PEER");
		assertThat(qkv("--nodes", nodes(), "storage").output()).contains("backend lsm, healthy")
			.containsPattern("upserts +\\d");
		Result flush = qkv("--nodes", nodes(), "flush");
		assertThat(flush.exit()).isZero();
		assertThat(flush.output()).containsPattern("node " + cluster.url(0) + ": flush done in \\d+ ms")
			.containsPattern("node " + cluster.url(1) + ": flush done in \\d+ ms");
		assertThat(qkv("--nodes", cluster.url(0), "compact").output()).contains("compact done in");
	}

	@Test
	void repairRunsOnEveryNodeOrOneAndShowsEachRangesLastSuccess() throws Exception {
		Result everyNode = qkv("--nodes", nodes(), "repair");
		assertThat(everyNode.exit()).as(everyNode.output()).isZero();
		// Every node repairs the keys it is the primary of, in all 16 ranges.
		assertThat(everyNode.output())
			.containsPattern("node " + cluster.url(0) + ": repair done in \\d+ ms: ranges compared 16, differed \\d+, "
					+ "failed 0; entries streamed in \\d+, out \\d+")
			.containsPattern("node " + cluster.url(1) + ": repair done in \\d+ ms: ranges compared 16,")
			.containsPattern("RANGE +TOKENS +PRIMARY +REPLICAS +LAST-SUCCESS +AGE");
		// After the second node's repair, every range was repaired once.
		String second = everyNode.output().substring(everyNode.output().indexOf("node " + cluster.url(1) + ": repair"));
		assertThat(second).doesNotContain("never").containsPattern("(?m)^15 .* 2 +\\d{4}-\\d\\d-\\d\\dT");
		Result one = qkv("--nodes", nodes(), "repair", "--node", cluster.url(1));
		assertThat(one.exit()).as(one.output()).isZero();
		assertThat(one.output()).contains("ranges compared 16, differed 0, failed 0; entries streamed in 0, out 0")
			.doesNotContain("node " + cluster.url(0));
		assertThat(qkv("--nodes", nodes(), "repairs").output())
			.containsPattern("last repair \\(all\\) took \\d+ ms: ranges compared 16");
		assertThat(qkv("--nodes", nodes(), "status", "--node", cluster.url(1)).exit()).isEqualTo(2);
	}

	@Test
	void withoutAnAdminKeyEveryNodeRefusesAndTheKeyIsNeverAnArgument() throws Exception {
		Result refused = qkvWithKey(null, "--nodes", nodes(), "flush");
		assertThat(refused.exit()).isEqualTo(1);
		assertThat(refused.output()).contains("node " + cluster.url(0) + ": HTTP 401: set QKV_ADMIN_KEY");
		Result wrongAccess = qkvWithKey(TestKeys.WRITER, "--nodes", nodes(), "status");
		assertThat(wrongAccess.output()).contains("HTTP 403");
		assertThat(Files.readString(SCRIPT)).doesNotContain("-H \"Authorization").contains("--config -");
	}

	@Test
	void aDownNodeIsReportedAndFailsTheExitStatus() throws Exception {
		Result result = qkv("--nodes", cluster.url(0) + ",http://127.0.0.1:1", "status");
		assertThat(result.exit()).isEqualTo(1);
		assertThat(result.output()).contains("NODE").contains("node http://127.0.0.1:1: unreachable");
		assertThat(qkv("bogus").exit()).isEqualTo(2);
	}

	private static String nodes() {
		return cluster.url(0) + "," + cluster.url(1);
	}

	private static Result qkv(String... args) throws IOException, InterruptedException {
		return qkvWithKey(TestKeys.ADMIN, args);
	}

	/** Runs qkv with {@code QKV_ADMIN_KEY} set to {@code key}, or unset for null. */
	private static Result qkvWithKey(@Nullable String key, String... args) throws IOException, InterruptedException {
		List<String> command = new ArrayList<>(List.of("bash", SCRIPT.toString()));
		command.addAll(List.of(args));
		ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
		builder.environment().remove("QKV_ADMIN_KEY");
		if (key != null) {
			builder.environment().put("QKV_ADMIN_KEY", key);
		}
		Process process = builder.start();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
		return new Result(process.exitValue(), output);
	}

	record Result(int exit, String output) {
	}

}
