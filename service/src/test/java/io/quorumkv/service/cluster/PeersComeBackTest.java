package io.quorumkv.service.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.quorumkv.service.support.TestCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Right after its peers come back, a node answers {@code 3/3} writes with every replica
 * up: no spurious 504 while its circuit breakers recover and it delivers the hints it
 * kept. The scenario of a finding on three real nodes: node C serves alone (its breakers
 * to A and B open, hints pile up), A and B restart, a client retries a {@code 3/3} PUT
 * through each node until all answer 201, and then writes {@code 3/3} through C again.
 */
class PeersComeBackTest {

	private static final Duration RETRY_FOR = Duration.ofSeconds(30);

	@TempDir
	Path root;

	private TestCluster cluster;

	private String lastBody;

	@AfterEach
	void stop() {
		if (this.cluster != null) {
			this.cluster.close();
		}
	}

	@Test
	void writesAtFromOfFromSucceedRightAfterThePeersAreBack() {
		this.cluster = new TestCluster(this.root, 3,
				Map.of("quorumkv.cluster.hints.delivery-interval", "100ms", "quorumkv.cluster.replica-timeout", "2s"))
			.startAll();
		List<String> failures = new ArrayList<>();
		for (int round = 0; round < 4; round++) {
			this.cluster.stop(0);
			this.cluster.stop(1);
			// C alone: its breakers to A and B open, and every failed 3/3 write leaves C
			// a hint for each of them (C's own copy and the hints are written).
			for (int i = 0; i < 100; i++) {
				assertThat(put(2, "alone-" + round + "-" + i, "3/3")).isIn(503, 504);
			}
			this.cluster.start(0);
			this.cluster.start(1);
			// As a client would: retry through C at once until it succeeds, then go on.
			retryUntilCreated(2, "back-" + round);
			for (int i = 0; i < 30; i++) {
				int status = put(2, "after-" + round + "-" + i, "3/3");
				if (status != 201) {
					failures.add("round " + round + ", write " + i + ": " + status + " " + this.lastBody + " "
							+ peerStates());
				}
			}
		}
		assertThat(failures).as("3/3 writes through C with every replica up").isEmpty();
	}

	/** Node C's view of its peers: breaker state and the outcome of the last call. */
	private String peerStates() {
		io.quorumkv.service.peer.PeerClient peers = this.cluster.bean(2, io.quorumkv.service.peer.PeerClient.class);
		StringBuilder states = new StringBuilder();
		for (int node = 0; node < 2; node++) {
			Node peer = Node.of(this.cluster.url(node));
			states.append(node)
				.append('=')
				.append(peers.breakerState(peer))
				.append('/')
				.append(peers.lastOutcome(peer))
				.append(' ');
		}
		return states.toString();
	}

	private void retryUntilCreated(int node, String key) {
		long deadline = System.nanoTime() + RETRY_FOR.toNanos();
		while (put(node, key, "3/3") != 201) {
			assertThat(System.nanoTime()).as("a 3/3 write through node %d within %s", node, RETRY_FOR)
				.isLessThan(deadline);
			sleep(20);
		}
	}

	private int put(int node, String key, String replicas) {
		var result = this.cluster.client(node)
			.put()
			.uri(this.cluster.uri(node, "/v0/entity?id=" + key + "&replicas=" + replicas))
			.bodyValue(new byte[] { 'v' })
			.exchange()
			.expectBody(String.class)
			.returnResult();
		this.lastBody = result.getResponseBody();
		return result.getStatus().value();
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
