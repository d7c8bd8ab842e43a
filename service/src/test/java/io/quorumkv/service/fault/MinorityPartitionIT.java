package io.quorumkv.service.fault;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.quorumkv.service.support.FaultFolders;
import io.quorumkv.service.support.KvClient;
import io.quorumkv.service.support.Ledger;
import io.quorumkv.service.support.LedgerCheck;
import io.quorumkv.service.support.NodeProcesses;
import io.quorumkv.service.support.RingWatch;
import io.quorumkv.service.support.Workload;
import io.quorumkv.storage.contract.Seeds;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A minority of the metadata group's voters cut off in the middle of a decommission
 * (#51): five node processes behind fault proxies, RF 3, constant {@code 2/3} load
 * through the nodes on the majority side (five nodes: every one votes); a node that does
 * not lead the group leaves, asked of the leader, streaming at a low rate; in the middle
 * of its streaming another voter that does not lead the group is cut off both ways
 * (nothing reaches it, nothing it sends arrives) for a while. Meanwhile the group keeps
 * its leader on the majority side; healed, the change completes with no operator step,
 * the voter that was cut off catches up to the ring, and nothing acknowledged is lost or
 * resurrected. About two minutes of five processes: in the longer suite only
 * ({@code -Pfaults-long}).
 */
@EnabledIfSystemProperty(named = "quorumkv.faults.long", matches = "true")
@ExtendWith({ FaultFolders.KeepOnFailure.class, Seeds.class })
class MinorityPartitionIT {

	static final Duration AWAIT = Duration.ofSeconds(60);

	static final Pattern METADATA = Pattern
		.compile("metadata log: leader (\\S+)(?: \\(this node\\))?, voters \\[([^\\]]*)\\]");

	final KvClient client = new KvClient(Duration.ofSeconds(5));

	final RingWatch rings = new RingWatch(this.client);

	Path root;

	NodeProcesses nodes;

	@AfterEach
	void stop() {
		if (this.nodes != null) {
			this.nodes.close();
		}
		if (this.root != null) {
			FaultFolders.deleteUnlessFailed(this.root);
		}
	}

	@Test
	void aDecommissionCompletesAcrossAPartitionOfAVoterThatDoesNotLead(Seeds.Seed given) {
		long seed = given.value();
		System.out.println("MinorityPartitionIT: " + Seeds.rerun(seed));
		this.root = FaultFolders.create("minority-partition");
		this.nodes = new NodeProcesses(this.root, 5, true,
				Map.of("quorumkv.cluster.replication-factor", "3", "management.endpoints.web.exposure.include",
						"health,quorumkv", "quorumkv.cluster.membership.stream-rate", "64KB",
						"quorumkv.cluster.membership.stream-batch", "16KB"),
				List.of("-Xmx256m"))
			.startAll();
		Ledger preload = new Ledger();
		List<String> all = new ArrayList<>();
		for (int node = 0; node < 5; node++) {
			all.add(this.nodes.url(node));
		}
		// Every node coordinates (its ring confirmed by the metadata group) before the
		// preload.
		for (String url : all) {
			eventually(AWAIT, () -> assertThat(this.client.put(url, "ready", "1", "2/3")).isEqualTo(201));
		}
		preload.preload(all, "bulk", 3_000, 1_024);

		String[] metadata = metadata(0);
		int leader = node(metadata[0]);
		List<String> voters = Arrays.stream(metadata[1].split(",\\s*")).toList();
		int cut = -1;
		int leaving = -1;
		for (int node = 0; node < 5; node++) {
			boolean voter = voters.contains(this.nodes.id(node));
			if (cut < 0 && voter && node != leader) {
				cut = node;
			}
			else if (leaving < 0 && node != leader) {
				leaving = node;
			}
		}
		assertThat(cut).as("a voter that does not lead, voters %s", voters).isNotNegative();
		assertThat(leaving).as("a node that does not lead, voters %s", voters).isNotNegative();
		int asked = leader;
		System.out.println("MinorityPartitionIT: leader " + leader + ", voters " + voters + "; node " + leaving
				+ " leaves, asked of node " + asked + "; voter " + cut + " is cut off");

		List<String> live = new CopyOnWriteArrayList<>();
		for (int node = 0; node < 5; node++) {
			if (node != cut) {
				live.add(this.nodes.url(node));
			}
		}
		Ledger ledger = new Ledger();
		long epoch = this.rings.epoch(this.nodes.url(asked));
		try (Workload load = Workload.rotating(ledger, "minority", 4, 100, "2/3", () -> live, seed,
				Duration.ofSeconds(5))) {
			ledger.awaitMoreAcked("writes before the decommission", 50, AWAIT);
			KvClient.Answer answer = this.rings.change(this.nodes.url(asked), "decommission",
					"{\"url\":\"" + this.nodes.id(leaving) + "\"}");
			assertThat(answer.status()).as(answer.body()).isEqualTo(200);
			String leavingUrl = this.nodes.url(leaving);
			eventually(AWAIT, () -> assertThat(this.rings.transfers(leavingUrl)).contains("\"keys\":"));
			// Voter `cut` is cut off both ways.
			this.nodes.proxy(cut).isolate();
			for (int node = 0; node < 5; node++) {
				if (node != cut) {
					this.nodes.proxy(node).block(cut);
				}
			}
			long ackedBefore = ledger.acked();
			sleep(8_000);
			String[] during = metadata(asked);
			assertThat(node(during[0])).as("the group's leader during the partition").isNotEqualTo(cut);
			assertThat(ledger.acked()).as("writes go on through the majority side").isGreaterThan(ackedBefore + 50);
			for (int node = 0; node < 5; node++) {
				this.nodes.proxy(node).heal();
			}
			live.remove(this.nodes.url(leaving));
			List<String> staying = new ArrayList<>(live);
			staying.add(this.nodes.url(cut));
			Duration took = this.rings.awaitSettled(staying, epoch + 3, Duration.ofSeconds(240));
			System.out.println("MinorityPartitionIT: the decommission finished " + took.toMillis()
					+ " ms after the partition healed");
			ledger.awaitMoreAcked("writes after the change", 100, AWAIT);
		}
		this.nodes.stop(leaving);
		LedgerCheck bulk = LedgerCheck.publicRead(preload, this.client, this.nodes.url(cut), "2/3");
		assertThat(bulk.clean()).as("preloaded keys after the change: %s", bulk).isTrue();
		LedgerCheck written = LedgerCheck.publicRead(ledger, this.client, this.nodes.url(asked), "2/3");
		System.out.println("MinorityPartitionIT: 2/3 read back " + written);
		assertThat(written.clean()).as("writes under load: %s", written).isTrue();
	}

	/**
	 * The leader's id and the voters' ids (comma-separated) as node {@code node} sees
	 * them.
	 */
	private String[] metadata(int node) {
		String[] found = new String[2];
		eventually(AWAIT, () -> {
			KvClient.Answer status = this.client.getAdmin(this.nodes.url(node), "/actuator/quorumkv/membership");
			Matcher matcher = METADATA.matcher(status.body());
			assertThat(matcher.find()).as(status.body()).isTrue();
			found[0] = matcher.group(1);
			found[1] = matcher.group(2);
			assertThat(found[0]).isNotEqualTo("none");
		});
		return found;
	}

	private int node(String id) {
		for (int node = 0; node < this.nodes.size(); node++) {
			if (this.nodes.id(node).equals(id)) {
				return node;
			}
		}
		throw new AssertionError("no node has id " + id);
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new AssertionError(ex);
		}
	}

}
