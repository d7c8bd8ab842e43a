package io.quorumkv.service.fault;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.quorumkv.service.support.FaultFolders;
import io.quorumkv.service.support.KvClient;
import io.quorumkv.service.support.Ledger;
import io.quorumkv.service.support.LedgerCheck;
import io.quorumkv.service.support.NodeProcesses;
import io.quorumkv.service.support.RingWatch;
import io.quorumkv.service.support.Workload;
import io.quorumkv.storage.contract.Seeds;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Real node processes changing membership under constant load (writes and deletes at
 * {@code 2/3} through every live node, every answer in a {@link Ledger}), RF 3:
 * <ol>
 * <li>3 → 4 → 5 → 4 → 3 nodes: nothing acknowledged lost, no delete resurrected, every
 * key on exactly RF nodes once the changes are done; 503/504 answered during the changes
 * are counted and printed;</li>
 * <li>a join whose new node is killed (SIGKILL) mid-stream, then one of its sources: both
 * restart, the transfers resume from their durable cursors and the change completes with
 * nothing lost;</li>
 * <li>a dead node whose data folder is gone is replaced by a new node under load;
 * afterwards the replicas of every key agree.</li>
 * </ol>
 * One set of processes serves the three scenarios in turn (nodes 0-2 seed the cluster,
 * 3-6 come and go), to keep the suite's time down.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@ExtendWith({ FaultFolders.KeepOnFailure.class, Seeds.class })
// Two minutes or more of a shared two-core machine: in the longer suite (-Pfaults-long,
// docs/reliability.md) so that ./mvnw verify stays near 20 minutes.
@EnabledIfSystemProperty(named = "quorumkv.faults.long", matches = "true")
class ElasticClusterIT {

	static final int RF = 3;

	/** The bound on each wait for a state (writes acknowledged). */
	static final Duration AWAIT = Duration.ofSeconds(60);

	static Path root;

	static NodeProcesses nodes;

	static final List<String> live = new CopyOnWriteArrayList<>();

	static final Ledger ledger = new Ledger();

	final KvClient client = new KvClient(Duration.ofSeconds(5));

	final RingWatch rings = new RingWatch(this.client);

	@BeforeAll
	static void start() {
		root = FaultFolders.create("elastic");
		nodes = new NodeProcesses(root, 7, false,
				Map.of("quorumkv.cluster.replication-factor", Integer.toString(RF),
						"management.endpoints.web.exposure.include", "health,quorumkv",
						"quorumkv.cluster.membership.poll-interval", "200ms",
						"quorumkv.cluster.membership.checkpoint-interval", "300ms"),
				List.of("-Xmx256m"))
			.seeds(3)
			.startFirst(3);
		for (int i = 0; i < 3; i++) {
			live.add(nodes.url(i));
		}
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
	void growFromThreeToFiveAndShrinkBackUnderLoadLosesNothing(Seeds.Seed given) {
		long seed = given.value();
		System.out.println("ElasticClusterIT grow-shrink: " + Seeds.rerun(seed));
		Workload load = Workload.rotating(ledger, "gs", 4, 100, "2/3", () -> live, seed, Duration.ofSeconds(5));
		List<String> steps = new ArrayList<>();
		try {
			ledger.awaitMoreAcked("writes before the first join", 100, AWAIT);
			steps.add(join(3));
			steps.add(join(4));
			steps.add(leave(4));
			steps.add(leave(3));
			ledger.awaitMoreAcked("writes after the last change", 100, AWAIT);
		}
		finally {
			load.close();
		}
		System.out.println("ElasticClusterIT grow-shrink: " + steps + "; " + ledger + "; answers by status "
				+ ledger.answers() + " (503: " + ledger.answers(503) + ", 504: " + ledger.answers(504) + ")");
		assertThat(ledger.putsAcked.get()).isGreaterThan(200);
		assertThat(ledger.deletesAcked.get()).isGreaterThan(20);
		verify("grow-shrink", List.of(0, 1, 2));
	}

	@Test
	@Order(2)
	void aJoinResumesAfterItsNewNodeAndThenASourceAreKilledMidStream(Seeds.Seed given) {
		// Enough data for a stream of several seconds at the new node's rate limit.
		Ledger preload = new Ledger();
		preload.preload(live, "bulk", 3_000, 1_024);
		long seed = given.value();
		System.out.println("ElasticClusterIT resume: " + Seeds.rerun(seed));
		Workload load = Workload.rotating(ledger, "kill", 4, 100, "2/3", () -> live, seed, Duration.ofSeconds(5));
		try {
			nodes.start(5, Map.of("quorumkv.cluster.membership.stream-rate", "96KB",
					"quorumkv.cluster.membership.stream-batch", "32KB"));
			long epoch = this.rings.epoch(nodes.url(0));
			KvClient.Answer joined = this.rings.change(nodes.url(0), "join", "{\"url\":\"" + nodes.url(5) + "\"}");
			assertThat(joined.status()).as(joined.body()).isEqualTo(200);
			long keysBeforeKill = this.rings.awaitStreaming(nodes.url(5), 200, Duration.ofSeconds(60));
			nodes.kill(5);
			System.out.println("ElasticClusterIT resume: new node killed after " + keysBeforeKill + " keys");
			nodes.start(5);
			long keysAfterRestart = this.rings.awaitStreaming(nodes.url(5), keysBeforeKill + 50,
					Duration.ofSeconds(60));
			assertThat(nodes.logText(5)).contains("(resuming after");
			nodes.kill(1);
			live.remove(nodes.url(1));
			System.out.println(
					"ElasticClusterIT resume: source node 1 killed; the new node had " + keysAfterRestart + " keys");
			// The source stays down 2 s: the fault's length, not a wait for a state.
			sleep(2_000);
			nodes.start(1);
			live.add(nodes.url(1));
			live.add(nodes.url(5));
			Duration took = this.rings.awaitSettled(live, epoch + 3, Duration.ofSeconds(180));
			System.out.println("ElasticClusterIT resume: change finished " + took.toMillis() + " ms after the kills");
			ledger.awaitMoreAcked("writes after the change", 100, AWAIT);
		}
		finally {
			load.close();
		}
		LedgerCheck bulk = LedgerCheck.publicRead(preload, this.client, nodes.url(0), "2/3");
		assertThat(bulk.clean()).as("preloaded keys after the join: %s", bulk).isTrue();
		verify("resume", List.of(0, 1, 2, 5));
	}

	@Test
	@Order(3)
	void aDeadNodeWhoseDataFolderIsGoneIsReplacedUnderLoad(Seeds.Seed given) {
		long seed = given.value();
		System.out.println("ElasticClusterIT replace: " + Seeds.rerun(seed));
		Workload load = Workload.rotating(ledger, "replace", 4, 100, "2/3", () -> live, seed, Duration.ofSeconds(5));
		try {
			ledger.awaitMoreAcked("writes before the kill", 100, AWAIT);
			nodes.kill(2);
			live.remove(nodes.url(2));
			nodes.deleteData(2);
			nodes.start(6);
			long epoch = this.rings.epoch(nodes.url(0));
			KvClient.Answer replaced = this.rings.change(nodes.url(1), "replace",
					"{\"url\":\"" + nodes.url(2) + "\",\"replacement\":\"" + nodes.url(6) + "\"}");
			assertThat(replaced.status()).as(replaced.body()).isEqualTo(200);
			live.add(nodes.url(6));
			Duration took = this.rings.awaitSettled(live, epoch + 3, Duration.ofSeconds(120));
			System.out.println("ElasticClusterIT replace: " + took.toMillis() + " ms; " + ledger);
			assertThat(this.rings.ring(nodes.url(6)))
				.contains("\"id\":\"" + nodes.url(2) + "\",\"url\":\"" + nodes.url(6) + "\",\"state\":\"normal\"");
			ledger.awaitMoreAcked("writes after the replacement", 100, AWAIT);
		}
		finally {
			load.close();
		}
		verify("replace", List.of(0, 1, 5, 6));
	}

	private String join(int node) {
		nodes.start(node);
		long epoch = this.rings.epoch(nodes.url(0));
		KvClient.Answer answer = this.rings.change(nodes.url(0), "join", "{\"url\":\"" + nodes.url(node) + "\"}");
		assertThat(answer.status()).as(answer.body()).isEqualTo(200);
		List<String> members = new ArrayList<>(live);
		members.add(nodes.url(node));
		Duration took = this.rings.awaitSettled(members, epoch + 3, Duration.ofSeconds(120));
		live.add(nodes.url(node));
		return "join " + node + " " + took.toMillis() + " ms";
	}

	private String leave(int node) {
		live.remove(nodes.url(node));
		long epoch = this.rings.epoch(nodes.url(0));
		KvClient.Answer answer = this.rings.change(nodes.url(1), "decommission",
				"{\"url\":\"" + nodes.url(node) + "\"}");
		assertThat(answer.status()).as(answer.body()).isEqualTo(200);
		Duration took = this.rings.awaitSettled(live, epoch + 3, Duration.ofSeconds(120));
		nodes.stop(node);
		return "decommission " + node + " " + took.toMillis() + " ms";
	}

	/**
	 * Every acknowledged write reads back at 2/3, no acknowledged delete comes back, and
	 * once hints and repair have run every key is on exactly RF of {@code members}, which
	 * agree.
	 */
	private void verify(String name, List<Integer> members) {
		LedgerCheck quorum = LedgerCheck.publicRead(ledger, this.client, nodes.url(members.get(0)), "2/3");
		System.out.println("ElasticClusterIT " + name + ": 2/3 read back " + quorum);
		assertThat(quorum.clean()).as("2/3 reads: %s", quorum).isTrue();
		eventually(Duration.ofSeconds(60), () -> {
			List<String> wrong = new ArrayList<>();
			for (String key : ledger.keys()) {
				String state = null;
				int copies = 0;
				for (int node : members) {
					KvClient.Local local = this.client.local(nodes.url(node), key);
					if (local.absent()) {
						continue;
					}
					copies++;
					String here = local.tombstone() ? "<tombstone>" : local.value();
					if (state != null && !state.equals(here)) {
						wrong.add(key + ": " + state + " vs " + here);
					}
					state = here;
				}
				if (copies != RF && !(copies == 0 && ledger.possible(key).contains(Ledger.GONE))) {
					wrong.add(key + " on " + copies + " nodes");
				}
			}
			assertThat(wrong).as("keys not on exactly %d agreeing replicas", RF).isEmpty();
		});
		System.out.println("ElasticClusterIT " + name + ": every key of " + ledger.keys().size() + " on exactly " + RF
				+ " agreeing replicas of " + members);
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
