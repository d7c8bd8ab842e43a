package io.quorumkv.service.fault;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.quorumkv.service.support.FaultFolders;
import io.quorumkv.service.support.KvClient;
import io.quorumkv.service.support.NodeProcesses;
import io.quorumkv.service.support.RequiredTool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A node whose data folder is a small tmpfs (mounted by the test; skipped where mounting
 * is not permitted, failed under CI: {@link RequiredTool}) fills it up. Writes then fail
 * with a clear 503 and a log line, reads go on, and nothing acknowledged is corrupted.
 * The LSM's failure is sticky (a WAL append that failed may have left a torn record; it
 * refuses writes until reopened), so freeing space is not enough: the node recovers on
 * restart, with every acknowledged write intact.
 */
@ExtendWith(FaultFolders.KeepOnFailure.class)
class DiskFullIT {

	Path root;

	Path mount;

	boolean mounted;

	NodeProcesses node;

	@BeforeEach
	void mountSmallTmpfs() throws Exception {
		this.root = FaultFolders.create("diskfull");
		this.mount = Files.createDirectories(this.root.resolve("tmpfs"));
		this.mounted = run("mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", this.mount.toString()) == 0;
		RequiredTool.require(this.mounted,
				"a tmpfs mount (needs root and CAP_SYS_ADMIN): mount -t tmpfs -o size=3m tmpfs " + this.mount);
	}

	@AfterEach
	void cleanUp() throws Exception {
		if (this.node != null) {
			this.node.close();
		}
		if (this.mounted) {
			run("umount", this.mount.toString());
		}
		FaultFolders.deleteUnlessFailed(this.root);
	}

	@Test
	void fullDiskFailsWritesClearlyKeepsReadsAndRecoversOnRestart() throws Exception {
		this.node = new NodeProcesses(this.root, 1, false,
				Map.of("quorumkv.storage.path", this.mount.resolve("node").toString()), List.of("-Xmx128m"))
			.startAll();
		KvClient client = new KvClient(Duration.ofSeconds(10));
		String base = this.node.url(0);
		Map<String, String> acked = new LinkedHashMap<>();
		String value = "x".repeat(16 * 1024);
		int failure = 0;
		String failureBody = "";
		for (int i = 0; i < 1_000 && failure == 0; i++) {
			String key = "disk-" + i;
			String v = i + ":" + value;
			KvClient.Answer answer = put(client, base, key, v);
			if (answer.status() == 201) {
				acked.put(key, v);
			}
			else {
				failure = answer.status();
				failureBody = answer.body();
			}
		}
		System.out.println("DiskFullIT: " + acked.size() + " writes of 16 KiB acknowledged, then " + failure + " "
				+ failureBody.strip());
		assertThat(acked).hasSizeGreaterThan(20);
		assertThat(failure).as("a full disk is a 503, never a 500").isEqualTo(503);
		assertThat(failureBody).contains("storage");
		assertThat(this.node.logText(0)).contains("failed; writes are refused");
		// Further writes fail fast the same way; reads go on; status and health say why.
		assertThat(put(client, base, "disk-more", "v").status()).isEqualTo(503);
		assertAllReadBack(client, base, acked);
		assertThat(client.getPath(base, "/v0/status").status()).isEqualTo(503);
		KvClient.Answer health = client.getPath(base, "/actuator/health");
		assertThat(health.status()).isEqualTo(503);
		assertThat(health.body()).contains("DOWN");

		// Space returns: the failure is sticky, writes stay refused until a restart.
		assertThat(run("mount", "-o", "remount,size=64m", this.mount.toString())).isZero();
		assertThat(put(client, base, "disk-after-space", "v").status()).isEqualTo(503);
		this.node.stop(0);
		this.node.start(0);
		assertAllReadBack(client, base, acked);
		assertThat(put(client, base, "disk-after-restart", "v").status()).isEqualTo(201);
		assertThat(client.get(base, "disk-after-restart", "1/1").body()).isEqualTo("v");
		assertThat(client.getPath(base, "/v0/status").status()).isEqualTo(200);
		System.out.println("DiskFullIT: after remount and restart all " + acked.size()
				+ " acknowledged writes read back intact; writes accepted again");
	}

	private static KvClient.Answer put(KvClient client, String base, String key, String value) {
		int status = client.put(base, key, value, "1/1");
		return (status == 201) ? new KvClient.Answer(201, "", false) : putAnswer(client, base, key, value, status);
	}

	/** Repeats a failed PUT to learn the body of its answer (it fails the same way). */
	private static KvClient.Answer putAnswer(KvClient client, String base, String key, String value, int status) {
		try {
			var http = java.net.http.HttpClient.newHttpClient();
			var response = http.send(java.net.http.HttpRequest
				.newBuilder(java.net.URI.create(base + "/v0/entity?id=" + key + "&replicas=1/1"))
				.PUT(java.net.http.HttpRequest.BodyPublishers.ofString(value))
				.timeout(Duration.ofSeconds(10))
				.build(), java.net.http.HttpResponse.BodyHandlers.ofString());
			return new KvClient.Answer(status, response.body(), false);
		}
		catch (IOException | InterruptedException ex) {
			return new KvClient.Answer(status, ex.toString(), false);
		}
	}

	private static void assertAllReadBack(KvClient client, String base, Map<String, String> acked) {
		for (Map.Entry<String, String> entry : acked.entrySet()) {
			KvClient.Answer answer = client.get(base, entry.getKey(), "1/1");
			assertThat(answer.status()).as(entry.getKey()).isEqualTo(200);
			assertThat(answer.body()).as(entry.getKey()).isEqualTo(entry.getValue());
		}
	}

	private static int run(String... command) throws IOException, InterruptedException {
		Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
		String output = new String(process.getInputStream().readAllBytes());
		if (!process.waitFor(30, TimeUnit.SECONDS)) {
			process.destroyForcibly();
			return -1;
		}
		if (process.exitValue() != 0) {
			System.out.println("DiskFullIT: " + String.join(" ", command) + ": " + output.strip());
		}
		return process.exitValue();
	}

}
