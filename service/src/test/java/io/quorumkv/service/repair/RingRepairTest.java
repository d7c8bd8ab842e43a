package io.quorumkv.service.repair;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.RingLayout;
import io.quorumkv.service.support.FaultFolders;
import io.quorumkv.service.support.KvClient;
import io.quorumkv.service.support.TestCluster;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Repair on a ring with a replication factor below the cluster size: five in-JVM nodes
 * (LSM) at RF 3. A replica restored from an old copy of its data folder converges after
 * one repair of its own (scope all), which streams exactly the keys it has wrong; no node
 * ever holds a key it does not own; then a scheduled-style pass (every node its primary
 * keys) finds nothing to do, and every range counts as repaired.
 */
class RingRepairTest {

	private static final Duration TIMEOUT = Duration.ofMinutes(2);

	private static final int NODES = 5;

	private static final int OLD_KEYS = 400;

	private static final int WRITES = 600;

	private static final int DELETES = 200;

	@TempDir
	Path root;

	final KvClient client = new KvClient(Duration.ofSeconds(30));

	@Test
	void aRestoredReplicaConvergesAfterOneRepairAndNoNodeReceivesAKeyItDoesNotOwn() throws Exception {
		Path folders = this.root.resolve("cluster");
		try (TestCluster cluster = new TestCluster(folders, NODES, Map.of("quorumkv.cluster.replication-factor", "3",
				"quorumkv.repair.scheduled", "false", "quorumkv.repair.max-entries-per-second", "0"))
			.startAll()) {
			Random random = new Random(26);
			List<Runnable> before = new ArrayList<>();
			for (int i = 0; i < OLD_KEYS; i++) {
				String key = "old-" + i;
				String node = cluster.url(i % NODES);
				before.add(() -> assertThat(this.client.put(node, key, "v0-" + key, "3/3")).isEqualTo(201));
			}
			runAll(before);

			Path copy = this.root.resolve("copy");
			cluster.stop(2);
			copyFolder(folders.resolve("node2"), copy);
			cluster.start(2);

			List<Runnable> after = new ArrayList<>();
			for (int i = 0; i < WRITES; i++) {
				String key = (random.nextInt(3) == 0) ? "old-" + random.nextInt(OLD_KEYS) : "new-" + i;
				String node = cluster.url(i % NODES);
				String value = "v1-" + i;
				after.add(() -> assertThat(this.client.put(node, key, value, "3/3")).isEqualTo(201));
			}
			runAll(after);
			List<Runnable> deletes = new ArrayList<>();
			for (int i = 0; i < DELETES; i++) {
				String key = (i % 2 == 0) ? "old-" + random.nextInt(OLD_KEYS) : "new-" + random.nextInt(WRITES);
				String node = cluster.url(i % NODES);
				deletes.add(() -> assertThat(this.client.delete(node, key, "3/3")).isEqualTo(202));
			}
			runAll(deletes);

			cluster.stop(2);
			FaultFolders.delete(folders.resolve("node2"));
			copyFolder(copy, folders.resolve("node2"));
			cluster.start(2);

			RingLayout layout = cluster.bean(0, ClusterState.class).layout();
			assertThat(layout).isNotNull();
			assertThat(layout.replicationFactor()).isEqualTo(3);
			List<String> ids = new ArrayList<>();
			List<Map<String, Entry>> stores = new ArrayList<>();
			for (int node = 0; node < NODES; node++) {
				ids.add(cluster.bean(node, ClusterState.class).self().id());
				stores.add(everything(cluster, node));
			}
			assertOnlyOwnedKeys(layout, ids, stores);
			// What node 2 should hold: every key it owns, as its other owners agree on
			// it.
			Map<String, Entry> expected = new TreeMap<>();
			for (int node = 0; node < NODES; node++) {
				if (node == 2) {
					continue;
				}
				stores.get(node).forEach((key, entry) -> {
					if (layout.owns(ids.get(2), entry.key())) {
						Entry other = expected.putIfAbsent(key, entry);
						assertThat(other == null || other.equals(entry)).as("the current owners agree on %s", key)
							.isTrue();
					}
				});
			}
			long differing = differences(stores.get(2), expected);
			assertThat(differing).as("keys the restored replica has wrong").isPositive();
			Set<String> keys = new java.util.HashSet<>();
			stores.forEach((store) -> keys.addAll(store.keySet()));
			assertThat(expected.size()).as("node 2 owns some of the keys, not all of them")
				.isPositive()
				.isLessThan(keys.size());

			RepairReport report = cluster.bean(2, RepairService.class).repair(RepairService.Scope.ALL).block(TIMEOUT);

			assertThat(report).isNotNull();
			assertThat(report.rangesFailed()).as("failed ranges: %s", report.ranges()).isZero();
			assertThat(report.rangesCompared()).isEqualTo(16);
			assertThat(report.entriesIn() + report.entriesOut()).as("entries streamed").isEqualTo(differing);
			List<Map<String, Entry>> repaired = new ArrayList<>();
			for (int node = 0; node < NODES; node++) {
				repaired.add(everything(cluster, node));
			}
			assertThat(repaired.get(2)).as("node 2 after the repair").isEqualTo(expected);
			for (int node = 0; node < NODES; node++) {
				if (node != 2) {
					assertThat(repaired.get(node)).as("node %d, which had nothing wrong", node)
						.isEqualTo(stores.get(node));
				}
			}
			assertOnlyOwnedKeys(layout, ids, repaired);

			// Every node's primary keys: nothing differs any more, every range is
			// covered.
			for (int node = 0; node < NODES; node++) {
				RepairReport primary = cluster.bean(node, RepairService.class)
					.repair(RepairService.Scope.PRIMARY)
					.block(TIMEOUT);
				assertThat(primary).isNotNull();
				assertThat(primary.rangesFailed()).isZero();
				assertThat(primary.entriesIn() + primary.entriesOut()).as("streamed by node %d", node).isZero();
			}
			RepairService service = cluster.bean(0, RepairService.class);
			assertThat(service.ranges()).hasSize(16)
				.allSatisfy((range) -> assertThat(service.lastSuccess(range)).isPresent());
			for (int node = 0; node < NODES; node++) {
				assertThat(everything(cluster, node)).as("node %d after every node's primary repair", node)
					.isEqualTo(repaired.get(node));
			}
		}
	}

	/** Each node holds only keys the ring places on it (tombstones included). */
	private static void assertOnlyOwnedKeys(RingLayout layout, List<String> ids, List<Map<String, Entry>> stores) {
		for (int node = 0; node < stores.size(); node++) {
			String id = ids.get(node);
			assertThat(stores.get(node).values()).as("keys on node %d", node)
				.allSatisfy((entry) -> assertThat(layout.owns(id, entry.key())).isTrue());
		}
	}

	/** A node's whole local store, tombstones included, by key. */
	private static Map<String, Entry> everything(TestCluster cluster, int node) {
		Map<String, Entry> all = new TreeMap<>();
		for (Entry entry : Objects
			.requireNonNull(cluster.bean(node, Storage.class).scan(new byte[0], null).collectList().block(TIMEOUT))) {
			all.put(new String(entry.key()), entry);
		}
		return all;
	}

	/** Keys whose version differs between two stores (one side absent included). */
	private static long differences(Map<String, Entry> a, Map<String, Entry> b) {
		Set<String> keys = new java.util.HashSet<>(a.keySet());
		keys.addAll(b.keySet());
		return keys.stream().filter((key) -> !Objects.equals(a.get(key), b.get(key))).count();
	}

	private static void runAll(List<Runnable> requests) throws Exception {
		ExecutorService pool = Executors.newFixedThreadPool(6);
		try {
			List<Future<?>> done = new ArrayList<>();
			requests.forEach((request) -> done.add(pool.submit(request)));
			for (Future<?> future : done) {
				future.get();
			}
		}
		finally {
			pool.shutdownNow();
		}
	}

	private static void copyFolder(Path from, Path to) throws IOException {
		try (Stream<Path> paths = Files.walk(from)) {
			for (Path path : (Iterable<Path>) paths::iterator) {
				Path target = to.resolve(from.relativize(path).toString());
				if (Files.isDirectory(path)) {
					Files.createDirectories(target);
				}
				else {
					Files.copy(path, target, StandardCopyOption.REPLACE_EXISTING);
				}
			}
		}
	}

}
