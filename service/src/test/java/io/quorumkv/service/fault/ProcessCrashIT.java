package io.quorumkv.service.fault;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.quorumkv.service.support.KvClient;
import io.quorumkv.service.support.Ledger;
import io.quorumkv.service.support.LedgerCheck;
import io.quorumkv.service.support.NodeProcesses;
import io.quorumkv.service.support.Workload;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three real node processes take {@code 2/3} writes and deletes from several client
 * threads while one node is killed with SIGKILL and restarted: first a replica, then the
 * coordinator the clients write to (they fail over to another node while it is down).
 * Afterwards every acknowledged write reads back at {@code 2/3}, no delete acknowledged
 * with 202 comes back, and once hints and read repair have run every replica holds the
 * same state at {@code 1/1}.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ProcessCrashIT {

	static final boolean LONG = Boolean.getBoolean("quorumkv.faults.long");

	@TempDir
	static Path root;

	static NodeProcesses nodes;

	final KvClient client = new KvClient(Duration.ofSeconds(5));

	@BeforeAll
	static void start() {
		nodes = new NodeProcesses(root, 3, false, Map.of(), List.of("-Xmx256m")).startAll();
	}

	@AfterAll
	static void stop() {
		if (nodes != null) {
			nodes.close();
		}
	}

	@Test
	@Order(1)
	void replicaKilledUnderLoadLosesNothingAcknowledged() {
		crashUnderLoad("replica", 2);
	}

	@Test
	@Order(2)
	void coordinatorKilledUnderLoadLosesNothingAcknowledged() {
		crashUnderLoad("coordinator", 0);
	}

	private void crashUnderLoad(String name, int victim) {
		Ledger ledger = new Ledger();
		long seed = System.nanoTime();
		System.out.println("ProcessCrashIT " + name + ": seed " + seed);
		int rounds = LONG ? 4 : 1;
		try (Workload workload = new Workload(ledger, name, 4, 50, "2/3", (t) -> List.of(nodes.url(0), nodes.url(1)),
				seed, Duration.ofSeconds(5))) {
			for (int round = 0; round < rounds; round++) {
				sleep(2_000);
				long ackedBefore = ledger.acked();
				nodes.kill(victim);
				sleep(1_500);
				nodes.start(victim);
				sleep(1_500);
				assertThat(ledger.acked()).as("writes acknowledged after the restart").isGreaterThan(ackedBefore);
			}
		}
		System.out.println("ProcessCrashIT " + name + ": " + ledger + ", kills " + rounds);
		assertThat(ledger.putsAcked.get()).isGreaterThan(100);
		assertThat(ledger.deletesAcked.get()).isGreaterThan(10);

		LedgerCheck quorum = LedgerCheck.publicRead(ledger, this.client, nodes.url(1), "2/3");
		System.out.println("ProcessCrashIT " + name + ": 2/3 read back " + quorum);
		assertThat(quorum.clean()).as("2/3 reads after the crash: %s", quorum).isTrue();
		assertThat(quorum.checked()).isEqualTo(ledger.keys().size());

		// Hints (and the read repair of the pass above) bring every replica up to date.
		List<String> urls = List.of(nodes.url(0), nodes.url(1), nodes.url(2));
		eventually(Duration.ofSeconds(30), () -> {
			for (int node = 0; node < 3; node++) {
				LedgerCheck replica = LedgerCheck.replicaRead(ledger, this.client, nodes.url(node));
				assertThat(replica.clean()).as("replica %d at 1/1: %s", node, replica).isTrue();
			}
			assertThat(LedgerCheck.divergent(ledger, this.client, urls)).isEmpty();
		});
		System.out.println("ProcessCrashIT " + name + ": every replica agrees on " + ledger.keys().size()
				+ " keys; lost 0, resurrected 0");
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
