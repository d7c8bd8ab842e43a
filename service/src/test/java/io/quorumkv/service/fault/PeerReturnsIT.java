package io.quorumkv.service.fault;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.quorumkv.service.support.FaultFolders;
import io.quorumkv.service.support.KvClient;
import io.quorumkv.service.support.NodeProcesses;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * No spurious 504 right after a peer returns, on three real node processes (the finding
 * "504 after restart"): node B is stopped; writes at {@code 2/3} through C leave hints
 * for B until C's circuit breaker toward B is open; B starts again; at once {@code 3/3}
 * writes go through C, then through every node. Every one must be answered 201: B is up,
 * so a write that needs every replica must reach it, whatever C's breaker said a moment
 * ago.
 */
@ExtendWith(FaultFolders.KeepOnFailure.class)
class PeerReturnsIT {

	private static final int WRITES = 100;

	private static final Duration LIMIT = Duration.ofSeconds(60);

	private Path root;

	private NodeProcesses nodes;

	private final KvClient client = new KvClient(Duration.ofSeconds(10));

	@BeforeEach
	void start() {
		this.root = FaultFolders.create("peer-returns");
	}

	@AfterEach
	void stop() {
		if (this.nodes != null) {
			this.nodes.close();
		}
		FaultFolders.deleteUnlessFailed(this.root);
	}

	@Test
	void writesThatNeedEveryReplicaSucceedAtOnceWhenAStoppedPeerReturns() {
		// A short wait in the open state would hide the bug by chance; the default is
		// what users run.
		this.nodes = new NodeProcesses(this.root, 3, false, Map.of(), List.of()).startAll();
		int b = 1;
		int c = 2;
		String urlC = this.nodes.url(c);
		this.nodes.stop(b);
		long deadline = System.nanoTime() + LIMIT.toNanos();
		int written = 0;
		while (!breakerOpen(urlC, this.nodes.id(b)) || pendingHints(urlC) == 0) {
			assertThat(System.nanoTime() - deadline).as("C's breaker toward B opens within %s", LIMIT).isNegative();
			assertThat(this.client.put(urlC, "around-" + written, "v", "2/3")).isEqualTo(201);
			written++;
		}
		this.nodes.start(b);
		this.nodes.awaitReady(b, LIMIT);
		List<String> failures = new ArrayList<>();
		for (int node : new int[] { c, 0, b }) {
			for (int i = 0; i < WRITES; i++) {
				String key = "after-" + node + "-" + i;
				KvClient.Answer answer = this.client.putAnswer(this.nodes.url(node), key, "v", "3/3");
				if (answer.status() != 201) {
					failures.add("through node " + node + ", write " + i + ": " + answer.status() + " "
							+ answer.body().strip());
				}
			}
		}
		assertThat(failures).as("3/3 writes after %d writes around B and B's return", written).isEmpty();
	}

	/** Whether the node's circuit breaker toward {@code peerId} is open (its metrics). */
	private boolean breakerOpen(String url, String peerId) {
		String metrics = this.client.getPath(url, "/actuator/prometheus").body();
		Matcher open = Pattern
			.compile("resilience4j_circuitbreaker_state\\{[^}]*name=\"" + Pattern.quote(peerId)
					+ "\"[^}]*state=\"open\"[^}]*\\} ([0-9.]+)")
			.matcher(metrics);
		return open.find() && Double.parseDouble(open.group(1)) == 1.0;
	}

	private long pendingHints(String url) {
		String metrics = this.client.getPath(url, "/actuator/prometheus").body();
		Matcher pending = Pattern.compile("quorumkv_hints_pending\\{[^}]*\\} ([0-9.E]+)").matcher(metrics);
		long sum = 0;
		while (pending.find()) {
			sum += (long) Double.parseDouble(pending.group(1));
		}
		return sum;
	}

}
