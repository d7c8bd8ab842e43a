package io.quorumkv.service.fault;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.quorumkv.service.support.FaultFolders;
import io.quorumkv.service.support.KvClient;
import io.quorumkv.service.support.NodeProcesses;
import io.quorumkv.service.support.Qkv;
import io.quorumkv.service.support.Qkv.Result;
import io.quorumkv.storage.contract.Seeds;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code kill -9} in the middle of a snapshot, on a real node process (docs/backup.md,
 * "Crashes during a snapshot"). A node (LSM, small memtables, so a snapshot links many
 * tables) takes a whole snapshot {@code s0}; then, round after round,
 * {@code qkv snapshot} starts another and the test watches the node's snapshot folder:
 * the moment the snapshot's {@code .NAME.partial} folder appears the node is stopped
 * (SIGSTOP), and if the folder is still partial (the snapshot is cut in its middle) the
 * node is killed (SIGKILL) there. After each restart: no partial folder is left and the
 * start logged the one it removed; no folder bears the cut snapshot's name; the earlier
 * snapshots are listed and verify; every key reads the value it was last written. A round
 * whose snapshot finished before the stop landed is killed too (after its end) and
 * checked the same way; the test goes on until {@link #CUTS} snapshots were cut in their
 * middle, at most {@link #ROUNDS} rounds.
 */
@ExtendWith({ FaultFolders.KeepOnFailure.class, Seeds.class })
class SnapshotCrashIT {

	static final boolean LONG = Boolean.getBoolean("quorumkv.faults.long");

	static final int CUTS = LONG ? 5 : 1;

	static final int ROUNDS = LONG ? 30 : 8;

	static final int KEYS = 1_500;

	final KvClient client = new KvClient(Duration.ofSeconds(5));

	Path root;

	NodeProcesses node;

	@AfterEach
	void stop() {
		if (this.node != null) {
			this.node.close();
		}
		if (this.root != null) {
			FaultFolders.deleteUnlessFailed(this.root);
		}
	}

	@Test
	void aNodeKilledInTheMiddleOfASnapshotKeepsItsDataAndItsWholeSnapshots(Seeds.Seed given) throws Exception {
		long seed = given.value();
		System.out.println("SnapshotCrashIT: " + Seeds.rerun(seed));
		Random random = new Random(seed);
		this.root = FaultFolders.create("snapshot-crash");
		Map<String, String> settings = new HashMap<>(NodeProcesses.SMALL_LSM);
		settings.put("management.endpoints.web.exposure.include", "health,quorumkv");
		this.node = new NodeProcesses(this.root, 1, false, settings, List.of("-Xmx256m")).startAll();
		String url = this.node.url(0);
		Map<String, String> values = new HashMap<>();
		write(url, values, random, 0);

		Result first = Qkv.run("--nodes", url, "snapshot", "s0");
		assertThat(first.exit()).as(first.output()).isZero();
		List<String> whole = new ArrayList<>(List.of("s0"));
		Path snapshots = this.node.dataFolder(0).resolve("snapshots");

		int cuts = 0;
		int rounds = 0;
		while (cuts < CUTS && rounds < ROUNDS) {
			rounds++;
			String name = "s" + rounds;
			Path partial = snapshots.resolve("." + name + ".partial");
			boolean cut;
			try (WatchService watcher = FileSystems.getDefault().newWatchService()) {
				snapshots.register(watcher, StandardWatchEventKinds.ENTRY_CREATE);
				Process qkv = Qkv.start("--nodes", url, "snapshot", name);
				boolean appeared = awaitCreated(watcher, partial.getFileName(), Duration.ofSeconds(60));
				this.node.signal(0, true);
				cut = appeared && Files.isDirectory(partial);
				this.node.kill(0);
				qkv.getInputStream().readAllBytes();
				assertThat(qkv.waitFor(60, TimeUnit.SECONDS)).isTrue();
				assertThat(appeared).as("the snapshot's partial folder appeared").isTrue();
			}
			if (cut) {
				cuts++;
				assertThat(snapshots.resolve(name)).as("a cut snapshot never bears its name").doesNotExist();
			}
			else {
				whole.add(name);
			}
			System.out
				.println("SnapshotCrashIT round " + rounds + ": " + name + (cut ? " cut in its middle" : " whole"));
			this.node.start(0);
			assertThat(partials(snapshots)).as("no partial folder is left after a start").isEmpty();
			if (cut) {
				assertThat(this.node.logText(0)).contains("Removing " + partial);
			}
			checkSnapshots(url, snapshots, whole);
			checkValues(url, values);
			write(url, values, random, rounds);
		}
		System.out.println("SnapshotCrashIT: " + cuts + " snapshots cut in their middle in " + rounds + " rounds");
		assertThat(cuts).as("snapshots cut in their middle (the stop always came after their end?)")
			.isGreaterThanOrEqualTo(CUTS);
	}

	/** Writes {@link #KEYS} keys, a new value for each, with 1 KB values. */
	private void write(String url, Map<String, String> values, Random random, int round) {
		for (int i = 0; i < KEYS; i++) {
			String key = "k" + i;
			String value = "r" + round + "-" + random.nextLong() + "-" + "v".repeat(1_000);
			assertThat(this.client.put(url, key, value, "1/1")).isEqualTo(201);
			values.put(key, value);
		}
	}

	private void checkValues(String url, Map<String, String> values) {
		for (Map.Entry<String, String> entry : values.entrySet()) {
			KvClient.Answer answer = this.client.get(url, entry.getKey(), "1/1");
			assertThat(answer.status()).as(entry.getKey()).isEqualTo(200);
			assertThat(answer.body()).as(entry.getKey()).isEqualTo(entry.getValue());
		}
	}

	/** The node lists exactly the whole snapshots, and each verifies. */
	private static void checkSnapshots(String url, Path snapshots, List<String> whole)
			throws IOException, InterruptedException {
		Result listed = Qkv.run("--nodes", url, "snapshots");
		assertThat(listed.exit()).as(listed.output()).isZero();
		try (Stream<Path> folders = Files.list(snapshots)) {
			assertThat(folders.map((folder) -> folder.getFileName().toString()))
				.containsExactlyInAnyOrderElementsOf(whole);
		}
		for (String name : whole) {
			assertThat(listed.output()).containsPattern("(?m)^" + name + " ");
			Result verified = Qkv.run("--nodes", url, "verify-snapshot", snapshots.resolve(name).toString());
			assertThat(verified.exit()).as(verified.output()).isZero();
		}
	}

	private static List<Path> partials(Path snapshots) throws IOException {
		try (Stream<Path> folders = Files.list(snapshots)) {
			return folders.filter((folder) -> folder.getFileName().toString().endsWith(".partial")).toList();
		}
	}

	/** Waits until {@code name} is created in the watched folder; false at the limit. */
	private static boolean awaitCreated(WatchService watcher, Path name, Duration limit) throws InterruptedException {
		long deadline = System.nanoTime() + limit.toNanos();
		while (System.nanoTime() < deadline) {
			WatchKey key = watcher.poll(100, TimeUnit.MILLISECONDS);
			if (key == null) {
				continue;
			}
			for (WatchEvent<?> event : key.pollEvents()) {
				if (name.equals(event.context())) {
					return true;
				}
			}
			key.reset();
		}
		return false;
	}

}
