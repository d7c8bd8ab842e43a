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
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;

import io.quorumkv.service.support.FaultFolders;
import io.quorumkv.service.support.KvClient;
import io.quorumkv.service.support.TestCluster;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A replica restored from an old copy of its data folder converges after one repair,
 * without a single client read, and the repair streams exactly the entries that differ:
 * three in-JVM nodes on each backend; the copy is taken before 666 writes and deletes
 * (2,000 with {@code -Pfaults-long}) of old keys and new ones at 3/3; the repair runs on
 * a current node for the LSM, on the restored one for H2 (it pulls everything), on the
 * other current one for Derby.
 */
class AntiEntropyTest {

	private static final Duration TIMEOUT = Duration.ofMinutes(2);

	/**
	 * {@code ./mvnw verify} writes 200 old keys, then 500 writes and 166 deletes after
	 * the copy; the longer suite ({@code -Pfaults-long}) three times as many, as before.
	 */
	private static final int SCALE = Boolean.getBoolean("quorumkv.faults.long") ? 3 : 1;

	private static final int OLD_KEYS = 200 * SCALE;

	private static final int WRITES = 500 * SCALE;

	private static final int DELETES = 500 * SCALE / 3;

	@TempDir
	Path root;

	final KvClient client = new KvClient(Duration.ofSeconds(30));

	/**
	 * The last row settles the differing keys in batches of two (seven digests held, over
	 * three replicas): the merge of the three digest streams by key carries over from
	 * batch to batch.
	 */
	@ParameterizedTest(name = "{0}, repaired from node {1}, {2} digests held")
	@CsvSource({ "lsm, 0, 100000", "h2, 2, 100000", "derby, 1, 100000", "lsm, 1, 7" })
	void aReplicaRestoredFromAnOldCopyConvergesAfterOneRepairStreamingOnlyTheDifference(String backend, int initiator,
			int maxDigests) throws Exception {
		try (TestCluster cluster = new TestCluster(this.root.resolve("cluster"), 3,
				Map.of("quorumkv.storage.backend", backend, "quorumkv.storage.derby.durability", "no-sync",
						"quorumkv.repair.scheduled", "false", "quorumkv.repair.max-entries-per-second", "0",
						"quorumkv.repair.max-digests", Integer.toString(maxDigests)))
			.startAll()) {
			Random random = new Random(27);
			List<Runnable> before = new ArrayList<>();
			for (int i = 0; i < OLD_KEYS; i++) {
				String key = "old-" + i;
				before.add(() -> assertThat(this.client.put(cluster.url(0), key, "v0-" + key, "3/3")).isEqualTo(201));
			}
			runAll(before);

			Path copy = this.root.resolve("copy");
			cluster.stop(2);
			copyFolder(this.root.resolve("cluster").resolve("node2"), copy);
			cluster.start(2);

			// After the copy: writes of new keys and old ones, deletes of both.
			Set<String> touched = ConcurrentHashMap.newKeySet();
			List<Runnable> after = new ArrayList<>();
			for (int i = 0; i < WRITES; i++) {
				String key = (random.nextInt(3) == 0) ? "old-" + random.nextInt(OLD_KEYS) : "new-" + i;
				String node = cluster.url(i % 2);
				String value = "v1-" + i;
				after.add(() -> assertThat(this.client.put(node, key, value, "3/3")).isEqualTo(201));
				touched.add(key);
			}
			runAll(after);
			List<Runnable> deletes = new ArrayList<>();
			for (int i = 0; i < DELETES; i++) {
				String key = (i % 2 == 0) ? "old-" + random.nextInt(OLD_KEYS) : "new-" + random.nextInt(WRITES);
				String node = cluster.url(i % 2);
				deletes.add(() -> assertThat(this.client.delete(node, key, "3/3")).isEqualTo(202));
				touched.add(key);
			}
			runAll(deletes);

			cluster.stop(2);
			FaultFolders.delete(this.root.resolve("cluster").resolve("node2"));
			copyFolder(copy, this.root.resolve("cluster").resolve("node2"));
			cluster.start(2);
			List<Entry> current = everything(cluster, 0);
			assertThat(everything(cluster, 1)).isEqualTo(current);
			long differing = differences(everything(cluster, 2), current);
			assertThat(differing).as("keys the restored replica has wrong").isPositive();

			RepairReport report = cluster.bean(initiator, RepairService.class)
				.repair(RepairService.Scope.ALL)
				.block(TIMEOUT);

			assertThat(report).isNotNull();
			assertThat(report.rangesFailed()).as("failed ranges: %s", report.ranges()).isZero();
			assertThat(report.rangesCompared()).isEqualTo(16);
			assertThat(report.entriesIn() + report.entriesOut()).as("entries streamed").isEqualTo(differing);
			assertThat(differing).as("every key touched after the copy differs, and only those")
				.isEqualTo(touched.size());
			for (int node = 0; node < 3; node++) {
				assertThat(everything(cluster, node)).as("node %d after the repair", node).isEqualTo(current);
			}
			RepairReport again = cluster.bean(2, RepairService.class).repair(RepairService.Scope.ALL).block(TIMEOUT);
			assertThat(again).isNotNull();
			assertThat(again.rangesDiffered()).isZero();
			assertThat(again.entriesIn() + again.entriesOut()).isZero();
		}
	}

	/** A node's whole local store, tombstones included, read from its storage. */
	private static List<Entry> everything(TestCluster cluster, int node) {
		return cluster.bean(node, Storage.class).scan(new byte[0], null).collectList().block(TIMEOUT);
	}

	/** Keys whose version differs between two stores (one side absent included). */
	private static long differences(List<Entry> a, List<Entry> b) {
		Map<String, Entry> left = new java.util.HashMap<>();
		a.forEach((entry) -> left.put(new String(entry.key()), entry));
		Map<String, Entry> right = new java.util.HashMap<>();
		b.forEach((entry) -> right.put(new String(entry.key()), entry));
		Set<String> keys = new java.util.HashSet<>(left.keySet());
		keys.addAll(right.keySet());
		return keys.stream().filter((key) -> !java.util.Objects.equals(left.get(key), right.get(key))).count();
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
