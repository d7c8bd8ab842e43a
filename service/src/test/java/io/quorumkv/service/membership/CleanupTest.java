package io.quorumkv.service.membership;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.stream.IntStream;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.ClusterStates;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.NodeState;
import io.quorumkv.service.cluster.PlacementStrategy;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingLayout;
import io.quorumkv.service.cluster.RingNode;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.contract.ForwardingStorage;
import io.quorumkv.storage.lsm.LsmOptions;
import io.quorumkv.storage.lsm.LsmStorage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

class CleanupTest {

	// Listed out of id order, with a removed node among them.
	private static final Ring RING = new Ring("qkv-test", 9, 3, PlacementStrategy.RENDEZVOUS, 16,
			List.of(node("node-c", NodeState.NORMAL), node("node-a", NodeState.NORMAL),
					node("node-x", NodeState.REMOVED), node("node-e", NodeState.NORMAL),
					node("node-b", NodeState.NORMAL), node("node-d", NodeState.NORMAL)),
			null);

	@Test
	void membersCleanUpOneAfterTheOtherInTheOrderOfTheirIds() {
		List<Optional<String>> before = List.of("node-a", "node-b", "node-c", "node-d", "node-e")
			.stream()
			.map((id) -> CleanupTurn.predecessor(RING, id).map(RingNode::id))
			.toList();
		// The removed node-x is not a member: node-e follows node-d.
		assertThat(before).containsExactly(Optional.empty(), Optional.of("node-a"), Optional.of("node-b"),
				Optional.of("node-c"), Optional.of("node-d"));
	}

	@Test
	void aNodeThatIsNotAMemberWaitsForNoOne() {
		assertThat(CleanupTurn.predecessor(RING, "node-x")).isEmpty();
		assertThat(CleanupTurn.predecessor(RING, "unknown")).isEmpty();
	}

	private static final List<Node> FOUR = IntStream.rangeClosed(1, 4)
		.mapToObj((i) -> Node.of("node-" + i, "http://127.0.0.1:1808" + i))
		.toList();

	private static final Ring FOUR_NODES = Ring.seed("qkv-test", FOUR, 3, PlacementStrategy.RENDEZVOUS, 16);

	// First by id: no member before it to wait for.
	private static final Node NEWCOMER = Node.of("node-0", "http://127.0.0.1:18085");

	@TempDir
	Path dir;

	@Test
	void theNewcomerIsTheNodeAJoinOrAReplacementBringsIn() {
		Ring join = FOUR_NODES.join(NEWCOMER, "c1", "http://127.0.0.1:18081");
		assertThat(NewcomerMark.isNewcomer(join, NEWCOMER)).isTrue();
		assertThat(NewcomerMark.isNewcomer(join, FOUR.get(1))).as("a member of the join").isFalse();
		// A replacement gives the node at the new URL the dead node's id.
		Ring replace = FOUR_NODES.replace("node-4", URI.create("http://127.0.0.1:18086"), "c2",
				"http://127.0.0.1:18081");
		assertThat(NewcomerMark.isNewcomer(replace, Node.of("node-6", "http://127.0.0.1:18086"))).isTrue();
		assertThat(NewcomerMark.isNewcomer(replace, FOUR.get(0))).isFalse();
		assertThat(
				NewcomerMark.isNewcomer(FOUR_NODES.decommission("node-4", "c3", "http://127.0.0.1:18081"), FOUR.get(3)))
			.as("a decommissioned node")
			.isFalse();
		assertThat(NewcomerMark.isNewcomer(FOUR_NODES, FOUR.get(0))).as("no change").isFalse();
		assertThat(NewcomerMark.isNewcomer(join.advance().advance(), NEWCOMER)).as("the join, ended").isFalse();
	}

	@Test
	void aNewcomerWithAnEmptyStorageRecordsTheChangeItMaySkipTheCleanupOf() throws Exception {
		Ring join = FOUR_NODES.join(NEWCOMER, "c1", "http://127.0.0.1:18081");
		try (ClusterState state = ClusterStates.of(NEWCOMER, FOUR_NODES, this.dir.resolve("ring"));
				LsmStorage storage = LsmStorage.open(LsmOptions.defaults(this.dir.resolve("data")))) {
			Cleanup cleanup = cleanup(state, storage);
			cleanup.noteIfNewcomer(join).block(Duration.ofSeconds(10));
			assertThat(cleanup.startedEmptyIn("c1")).isTrue();
			assertThat(cleanup.startedEmptyIn("c2")).as("another change").isFalse();
			// Recorded durably: a restarted node reads it back.
			Cleanup restarted = cleanup(state, storage);
			assertThat(restarted.startedEmptyIn("c1")).isTrue();
			// The clean-up after that change takes its turn (the newcomer is first by id)
			// and removes nothing: it runs no compaction, so the tombstone written
			// meanwhile stays. It is reported, and the record goes with it.
			storage.upsert(Entry.tombstone("k".getBytes(), 1)).block(Duration.ofSeconds(10));
			Ring ended = join.advance().advance();
			try (ClusterState after = ClusterStates.of(NEWCOMER, ended, this.dir.resolve("ring-after"))) {
				Cleanup ending = cleanup(after, storage);
				assertThat(ending.runInTurn(ended, "c1", Duration.ZERO).block(Duration.ofSeconds(10))).isZero();
				assertThat(ending.status().get("last")).asString().contains("skipped").contains("c1");
				assertThat(ending.status().get("running")).isEqualTo(false);
				assertThat(ending.startedEmptyIn("c1")).isFalse();
			}
			assertThat(storage.scan(new byte[0], null).count().block(Duration.ofSeconds(10))).isOne();
		}
	}

	@Test
	void aNewcomerThatHoldsAnEntryOrAMemberRecordsNothing() throws Exception {
		Ring join = FOUR_NODES.join(NEWCOMER, "c1", "http://127.0.0.1:18081");
		try (ClusterState newcomer = ClusterStates.of(NEWCOMER, FOUR_NODES, this.dir.resolve("ring"));
				ClusterState member = ClusterStates.of(FOUR.get(0), FOUR_NODES, this.dir.resolve("ring-member"));
				LsmStorage storage = LsmStorage.open(LsmOptions.defaults(this.dir.resolve("data")))) {
			// An empty storage, but this node is not the one the join brings in.
			cleanup(member, storage).noteIfNewcomer(join).block(Duration.ofSeconds(10));
			assertThat(Files.exists(this.dir.resolve(NewcomerMark.STARTED_EMPTY_FILE))).isFalse();
			// The newcomer, holding one tombstone.
			storage.upsert(Entry.tombstone("k".getBytes(), 1)).block(Duration.ofSeconds(10));
			Cleanup cleanup = cleanup(newcomer, storage);
			cleanup.noteIfNewcomer(join).block(Duration.ofSeconds(10));
			assertThat(cleanup.startedEmptyIn("c1")).isFalse();
			assertThat(Files.exists(this.dir.resolve(NewcomerMark.STARTED_EMPTY_FILE))).isFalse();
		}
	}

	/**
	 * A change that begins while a member cleans up after the last one may make it an
	 * owner again of keys that clean-up was to remove; what it receives for them under
	 * the new ring (writes to new owners, streams) must stay. The two-phase commit
	 * refused to prepare a change on a node cleaning up; the metadata group asks no
	 * member, and NemesisIT read a {@code 3/3} write stale after a decommission began
	 * while a member cleaned up after the join before it.
	 */
	@Test
	void aCleanupKeepsWhatTheNodeGainsInAChangeThatBeganWhileItRan() throws Exception {
		Node self = FOUR.get(0);
		Ring decommission = FOUR_NODES.decommission("node-4", "c5", "http://127.0.0.1:18082");
		RingLayout before = RingLayout.of(FOUR_NODES);
		RingLayout during = RingLayout.of(decommission);
		byte[] gained = key((k) -> !before.owns(self.id(), k) && during.isNewOwner(k, self.id()));
		// Of four nodes at RF 3, every other node's key is this node's once node-4
		// leaves.
		byte[] stranger = key((k) -> !before.owns(self.id(), k) && !java.util.Arrays.equals(k, gained));
		byte[] own = key((k) -> before.owns(self.id(), k));
		try (ClusterState state = ClusterStates.of(self, FOUR_NODES, this.dir.resolve("ring"));
				LsmStorage lsm = LsmStorage.open(LsmOptions.defaults(this.dir.resolve("data")))) {
			lsm.upsert(Entry.value(stranger, "left over".getBytes(), 1)).block(Duration.ofSeconds(10));
			lsm.upsert(Entry.value(own, "mine".getBytes(), 2)).block(Duration.ofSeconds(10));
			// Without a change meanwhile, a clean-up removes what this node does not own.
			assertThat(cleanup(state, lsm).run().block(Duration.ofSeconds(10))).isOne();
			assertThat(lsm.get(stranger).block(Duration.ofSeconds(10))).isNull();
			// The decommission's first ring arrives after the clean-up began, and with
			// it a write of a key this node gains, before the storage looked at it.
			Storage changing = new ChangeMidway(lsm, () -> {
				state.install(decommission).block(Duration.ofSeconds(10));
				lsm.upsert(Entry.value(gained, "acknowledged".getBytes(), 3)).block(Duration.ofSeconds(10));
			});
			Cleanup midway = cleanup(state, changing);
			midway.run().block(Duration.ofSeconds(10));
			Entry kept = lsm.get(gained).block(Duration.ofSeconds(10));
			assertThat(kept).as("the write this node acknowledged as a new owner").isNotNull();
			assertThat(new String(kept.value())).isEqualTo("acknowledged");
			assertThat(lsm.get(own).block(Duration.ofSeconds(10))).isNotNull();
			assertThat(midway.status().get("last")).asString().contains("keptFromEpoch=" + decommission.epoch());
		}
	}

	private static byte[] key(Predicate<byte[]> wanted) {
		for (int i = 0; i < 10_000; i++) {
			byte[] key = ("key-" + i).getBytes();
			if (wanted.test(key)) {
				return key;
			}
		}
		throw new IllegalStateException("no such key among 10,000");
	}

	/** A storage whose ring changes as a clean-up asks it to retain (before it looks). */
	private static final class ChangeMidway extends ForwardingStorage {

		private final Runnable change;

		ChangeMidway(Storage delegate, Runnable change) {
			super(delegate);
			this.change = change;
		}

		@Override
		public Mono<Long> retain(Predicate<byte[]> keep, long entriesPerSecond) {
			return Mono.fromRunnable(this.change)
				.subscribeOn(Schedulers.boundedElastic())
				.then(super.retain(keep, entriesPerSecond));
		}

	}

	private Cleanup cleanup(ClusterState state, Storage storage) {
		return new Cleanup(state, storage, this.dir, 1000, null, Duration.ofMillis(100), Duration.ofSeconds(1),
				new SimpleMeterRegistry());
	}

	private static RingNode node(String id, NodeState state) {
		return new RingNode(id, URI.create("http://127.0.0.1:" + (1000 + id.charAt(id.length() - 1))), state);
	}

}
