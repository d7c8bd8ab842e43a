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
import io.quorumkv.storage.contract.Seeds;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import io.quorumkv.service.support.FaultFolders;

/**
 * Three real node processes (child JVMs of the repackaged jar), peers reaching each other
 * through {@link io.quorumkv.service.support.FaultProxy fault proxies}, under client load
 * of {@code 2/3} writes and deletes:
 * <ul>
 * <li>a replica, then the coordinator the clients write to, killed with SIGKILL and
 * restarted (clients fail over while the coordinator is down);</li>
 * <li>one node cut off from the other two (both directions) while clients write through
 * every node, then healed;</li>
 * <li>one replica slowed down far beyond the replica timeout.</li>
 * </ul>
 * After each fault every acknowledged write reads back at {@code 2/3}, no delete
 * acknowledged with 202 comes back, and once hints and read repair have run every replica
 * holds the same state at {@code 1/1}. The nodes run with small LSM memtables and levels
 * ({@link NodeProcesses#SMALL_LSM}), so that the load flushes and compacts many times on
 * every node and a kill interrupts that work (checked through the storage metrics before
 * each kill and after the load). The nodes share one cluster (one start) to keep the
 * suite short; each test has its own keys. The client load is seeded ({@link Seeds}: a
 * failure names its seed, {@code -Dquorumkv.test.seed=N} repeats it).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@org.junit.jupiter.api.extension.ExtendWith({ FaultFolders.KeepOnFailure.class, Seeds.class })
class ClusterFaultsIT {

	static final boolean LONG = Boolean.getBoolean("quorumkv.faults.long");

	/** The bound on each wait for a state (writes acknowledged). */
	static final Duration AWAIT = Duration.ofSeconds(60);

	static Path root;

	static NodeProcesses nodes;

	final KvClient client = new KvClient(Duration.ofSeconds(5));

	@BeforeAll
	static void start() {
		root = FaultFolders.create("cluster");
		// A small bulkhead so that the slow-replica test can see it bound the calls.
		// Small memtables and levels (NodeProcesses.SMALL_LSM): kills land during flushes
		// and compactions.
		Map<String, String> properties = new java.util.HashMap<>(NodeProcesses.SMALL_LSM);
		properties.put("quorumkv.cluster.max-concurrent-calls-per-peer", "16");
		nodes = new NodeProcesses(root, 3, true, properties, List.of("-Xmx256m")).startAll();
	}

	@AfterAll
	static void stop() {
		if (nodes != null) {
			nodes.close();
		}
		FaultFolders.deleteUnlessFailed(root);
	}

	@Test
	@Order(1)
	void replicaKilledUnderLoadLosesNothingAcknowledged(Seeds.Seed seed) {
		crashUnderLoad("replica", 2, true, seed.value());
	}

	@Test
	@Order(2)
	void coordinatorKilledUnderLoadLosesNothingAcknowledged(Seeds.Seed seed) {
		// Writes in flight to the third replica when the coordinator died have no hint:
		// read repair (the 2/3 read pass) completes the replicas.
		crashUnderLoad("coordinator", 0, false, seed.value());
	}

	/**
	 * Kills {@code victim} under load and restarts it. With {@code hintsAlone} the load
	 * stops before the restart: nothing but hinted handoff may bring the victim up to
	 * date (no client write passes through its breaker to close it again); otherwise the
	 * clients keep writing (failing over) while it restarts.
	 */
	private void crashUnderLoad(String name, int victim, boolean hintsAlone, long seed) {
		Ledger ledger = new Ledger();
		System.out.println("ClusterFaultsIT " + name + ": " + Seeds.rerun(seed));
		int rounds = LONG ? 4 : 1;
		for (int round = 0; round < rounds; round++) {
			Workload workload = new Workload(ledger, name, 4, 50, "2/3", (t) -> List.of(nodes.url(0), nodes.url(1)),
					seed + 1000L * round, Duration.ofSeconds(5));
			try {
				ledger.awaitMoreAcked("writes before the kill", 100, AWAIT);
				awaitFlushes(victim, 3);
				long ackedBefore = ledger.acked();
				nodes.kill(victim);
				if (hintsAlone) {
					// Enough writes for hints to carry while the replica is down.
					ledger.awaitMoreAcked("writes acknowledged while a replica is down", 200, AWAIT);
					workload.close();
				}
				// down while it restarts (several seconds on a shared machine)
				nodes.start(victim);
				if (!hintsAlone) {
					ledger.awaitMoreAcked("writes acknowledged after the restart", 100, AWAIT);
				}
				assertThat(ledger.acked()).as("writes acknowledged after the kill").isGreaterThan(ackedBefore);
			}
			finally {
				workload.close();
			}
		}
		System.out.println("ClusterFaultsIT " + name + ": " + ledger + ", kills " + rounds);
		assertThat(ledger.putsAcked.get()).isGreaterThan(100);
		assertThat(ledger.deletesAcked.get()).isGreaterThan(10);

		verify(name, hintsAlone, ledger);
		assertTablesRotated(name);
	}

	/**
	 * Waits (under load) until the victim has flushed at least {@code count} memtables
	 * since it started, so that its kill lands among flushes and compactions.
	 */
	private void awaitFlushes(int victim, int count) {
		long deadline = System.nanoTime() + 30_000_000_000L;
		double flushes = metric(victim, "quorumkv.storage.flush.count");
		while (flushes < count && System.nanoTime() < deadline) {
			sleep(100);
			flushes = metric(victim, "quorumkv.storage.flush.count");
		}
		System.out.println("ClusterFaultsIT: killing node " + victim + " after " + flushes + " flushes and "
				+ metric(victim, "quorumkv.storage.compaction.count") + " compactions since it started");
		assertThat(flushes).as("memtables node %d flushed before its kill", victim).isGreaterThanOrEqualTo(count);
	}

	/**
	 * The load rotated memtables: flushes and compactions on the nodes (counted since
	 * each started: a node restarted without load after it may have none) and tables on
	 * disk, printed.
	 */
	private void assertTablesRotated(String name) {
		double flushes = 0;
		double compactions = 0;
		StringBuilder perNode = new StringBuilder();
		for (int node = 0; node < 3; node++) {
			double nodeFlushes = metric(node, "quorumkv.storage.flush.count");
			double nodeCompactions = metric(node, "quorumkv.storage.compaction.count");
			perNode.append("; node ")
				.append(node)
				.append(": ")
				.append(nodes.tables(node))
				.append(" tables, ")
				.append(nodeFlushes)
				.append(" flushes, ")
				.append(nodeCompactions)
				.append(" compactions");
			flushes += nodeFlushes;
			compactions += nodeCompactions;
		}
		System.out.println("ClusterFaultsIT " + name + ": since each node started" + perNode);
		assertThat(flushes).as("flushes in the cluster").isGreaterThanOrEqualTo(6);
		assertThat(compactions).as("compactions in the cluster").isPositive();
	}

	/**
	 * Checks every key at 2/3 and on every replica at 1/1. With {@code hintsAlone} the
	 * replicas are checked first, so that hinted handoff alone must have completed them;
	 * otherwise after the 2/3 pass, whose reads repair stale replicas.
	 */
	private void verify(String name, boolean hintsAlone, Ledger... ledgers) {
		for (Ledger ledger : ledgers) {
			if (hintsAlone) {
				replicasConverge(name, ledger);
				quorumReads(name, ledger);
			}
			else {
				quorumReads(name, ledger);
				replicasConverge(name, ledger);
			}
		}
	}

	private void quorumReads(String name, Ledger ledger) {
		double pushedBefore = metric(1, "quorumkv.repairs", "outcome:pushed");
		LedgerCheck quorum = LedgerCheck.publicRead(ledger, this.client, nodes.url(1), "2/3");
		System.out.println("ClusterFaultsIT " + name + ": 2/3 read back " + quorum + "; read repairs pushed "
				+ (metric(1, "quorumkv.repairs", "outcome:pushed") - pushedBefore) + ", failed "
				+ metric(1, "quorumkv.repairs", "outcome:failed") + ", skipped "
				+ metric(1, "quorumkv.repairs", "outcome:skipped") + " (node 1, all time)");
		assertThat(quorum.clean()).as("2/3 reads after the crash: %s", quorum).isTrue();
		assertThat(quorum.checked()).isEqualTo(ledger.keys().size());
	}

	private void replicasConverge(String name, Ledger ledger) {
		List<String> urls = List.of(nodes.url(0), nodes.url(1), nodes.url(2));
		eventually(Duration.ofSeconds(30), () -> {
			for (int node = 0; node < 3; node++) {
				LedgerCheck replica = LedgerCheck.replicaRead(ledger, this.client, nodes.url(node));
				assertThat(replica.clean()).as("replica %d at 1/1: %s", node, replica).isTrue();
			}
			assertThat(LedgerCheck.divergent(ledger, this.client, urls)).isEmpty();
		});
		System.out.println("ClusterFaultsIT " + name + ": every replica agrees on " + ledger.keys().size()
				+ " keys; lost 0, resurrected 0");
	}

	@Test
	@Order(3)
	void partitionedNodeConvergesAfterHealingWithNothingAcknowledgedLost(Seeds.Seed given) {
		Ledger majority = new Ledger();
		Ledger minority = new Ledger();
		long seed = given.value();
		System.out.println("ClusterFaultsIT partition: " + Seeds.rerun(seed));
		long partitionMillis = LONG ? 20_000 : 5_000;
		try (Workload onMajority = new Workload(majority, "pmaj", 4, 50, "2/3", (t) -> List.of(nodes.url(t % 2)), seed,
				Duration.ofSeconds(5));
				Workload onMinority = new Workload(minority, "pmin", 2, 50, "2/3", (t) -> List.of(nodes.url(2)),
						seed + 100, Duration.ofSeconds(5))) {
			majority.awaitMoreAcked("majority writes before the partition", 100, AWAIT);
			minority.awaitMoreAcked("minority writes before the partition", 20, AWAIT);
			long majorityBefore = majority.acked();
			long minorityFailedBefore = minority.failed.get();
			// Node 2 is cut off both ways: nothing reaches it, nothing it sends arrives.
			nodes.proxy(2).isolate();
			nodes.proxy(0).block(2);
			nodes.proxy(1).block(2);
			sleep(partitionMillis);
			assertThat(majority.acked()).as("the majority side keeps acknowledging").isGreaterThan(majorityBefore + 50);
			assertThat(minority.failed.get()).as("the cut-off node cannot reach a quorum")
				.isGreaterThan(minorityFailedBefore);
			long minorityAckedInPartition = minority.acked();
			for (int node = 0; node < 3; node++) {
				nodes.proxy(node).heal();
			}
			// Healed: writes through the node that was cut off reach a quorum again.
			minority.awaitMoreAcked("writes through node 2 after healing", 20, AWAIT);
			majority.awaitMoreAcked("majority writes after healing", 100, AWAIT);
			System.out.println("ClusterFaultsIT partition: majority " + majority + "; minority " + minority
					+ "; minority acks during/after the partition " + minorityAckedInPartition);
		}
		verify("partition", true, majority, minority);
	}

	@Test
	@Order(4)
	void slowReplicaDoesNotSlowQuorumRequestsNorPileUpCalls() throws Exception {
		long delay = 2_000;
		String slowId = nodes.id(2);
		double openedBefore = metric(0, "quorumkv.replica.requests", "peer:" + slowId, "outcome:breaker-open");
		nodes.proxy(2).delay(delay);
		nodes.proxy(2).resetMaxOpenConnections();
		long forwardedBefore = nodes.proxy(2).requestsForwarded();
		int threads = 4;
		long runMillis = LONG ? 30_000 : 6_000;
		List<Long> latencies = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
		java.util.concurrent.atomic.AtomicInteger failures = new java.util.concurrent.atomic.AtomicInteger();
		List<Thread> workers = new java.util.ArrayList<>();
		java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
		for (int t = 0; t < threads; t++) {
			int thread = t;
			workers.add(Thread.ofPlatform().start(() -> {
				KvClient own = new KvClient(Duration.ofSeconds(10));
				for (int i = 0; !stop.get(); i++) {
					String key = "slow-" + thread + "-" + (i % 50);
					long start = System.nanoTime();
					int status = (i % 2 == 0) ? own.put(nodes.url(0), key, "v" + i, "2/3")
							: own.get(nodes.url(0), key, "2/3").status();
					long millis = (System.nanoTime() - start) / 1_000_000;
					latencies.add(millis);
					if (millis > 1_500) {
						System.out.println("ClusterFaultsIT slow replica: " + ((i % 2 == 0) ? "PUT " : "GET ") + key
								+ " took " + millis + " ms, status " + status + " at " + java.time.Instant.now());
					}
					if (status != 201 && status != 200 && status != 404) {
						failures.incrementAndGet();
					}
				}
			}));
		}
		// The load runs its time and until the breaker has opened, at most 20 s more: one
		// batch call at a time goes to the peer (batch.max-in-flight) and each waits out
		// the 1 s replica timeout, so the breaker's minimum of 5 failed calls takes about
		// 5 s, longer on a loaded machine.
		long started = System.nanoTime();
		sleep(runMillis);
		long openBy = System.nanoTime() + 20_000_000_000L;
		while (metric(0, "quorumkv.replica.requests", "peer:" + slowId, "outcome:breaker-open") <= openedBefore
				&& System.nanoTime() < openBy) {
			sleep(250);
		}
		stop.set(true);
		long ranMillis = (System.nanoTime() - started) / 1_000_000;
		for (Thread worker : workers) {
			worker.join(30_000);
		}
		long forwarded = nodes.proxy(2).requestsForwarded() - forwardedBefore;
		int maxOpen = nodes.proxy(2).maxOpenConnections();
		nodes.proxy(2).delay(0);
		List<Long> sorted = latencies.stream().sorted().toList();
		long p99 = sorted.get((int) (sorted.size() * 0.99) - 1);
		long max = sorted.getLast();
		long waitedOutTimeout = sorted.stream().filter((millis) -> millis >= 1_000).count();
		double opened = metric(0, "quorumkv.replica.requests", "peer:" + slowId, "outcome:breaker-open") - openedBefore;
		System.out.println("ClusterFaultsIT slow replica (+" + delay + " ms): " + sorted.size() + " requests at 2/3 in "
				+ ranMillis + " ms, p99 " + p99 + " ms, max " + max + " ms, " + waitedOutTimeout
				+ " took the replica timeout (1 s) or longer, failures " + failures
				+ "; calls reaching the slow replica " + forwarded + ", most connections open to it at once " + maxOpen
				+ ", calls refused by its open breaker " + opened);
		// A 2/3 request must be answered (quorum or 504) within about the replica
		// timeout;
		// "status -1" lines above are requests left unanswered for the client's 10 s (see
		// docs/reliability.md, open issues).
		assertThat(failures.get()).as("2/3 requests not answered 200/201/404 (printed above)").isZero();
		// The p99 is reported above (5-6 ms in the runs of docs/reliability.md), not held
		// to 250 ms: on two cores shared with three node processes, their proxies and
		// this client, a quarter-second stall of the client or of node 0 is a scheduling
		// matter, not the coordinator waiting. What is asserted is what waiting for the
		// slow replica would show: requests taking the replica timeout (1 s), here at a
		// p99, which a stall of the machine does not reach.
		assertThat(p99).as("p99 of 2/3 requests with one replica %d ms slow", delay).isLessThan(1_000);
		assertThat(opened).as("the slow replica's breaker opened").isPositive();
		assertThat(forwarded).as("calls that reached the slow replica (of %d requests)", sorted.size())
			.isLessThan(sorted.size() / 4);
		// Without breaker and bulkhead every request leaves a call waiting out the 1 s
		// timeout (hundreds at this rate) and the pool's 64 connections fill up.
		assertThat(maxOpen).as("connections held open to the slow replica (bulkhead 16 per caller, pool 64)")
			.isLessThan(48);
	}

	/** A meter's first measurement on a node through /actuator/metrics, 0 when absent. */
	private double metric(int node, String name, String... tags) {
		StringBuilder path = new StringBuilder("/actuator/metrics/" + name);
		for (int i = 0; i < tags.length; i++) {
			path.append((i == 0) ? '?' : '&')
				.append("tag=")
				.append(java.net.URLEncoder.encode(tags[i], java.nio.charset.StandardCharsets.UTF_8));
		}
		KvClient.Answer answer = this.client.getPath(nodes.url(node), path.toString());
		if (answer.status() == 404) {
			return 0;
		}
		assertThat(answer.status()).as(answer.body()).isEqualTo(200);
		java.util.regex.Matcher value = java.util.regex.Pattern.compile("\\\"value\\\":([0-9.E+-]+)")
			.matcher(answer.body());
		assertThat(value.find()).as(answer.body()).isTrue();
		return Double.parseDouble(value.group(1));
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
