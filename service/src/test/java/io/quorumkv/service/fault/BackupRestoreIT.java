package io.quorumkv.service.fault;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import io.quorumkv.service.support.FileTrees;
import io.quorumkv.service.support.FaultFolders;
import io.quorumkv.service.support.KvClient;
import io.quorumkv.service.support.Ledger;
import io.quorumkv.service.support.LedgerCheck;
import io.quorumkv.service.support.NodeProcesses;
import io.quorumkv.service.support.Qkv;
import io.quorumkv.service.support.Qkv.Result;
import io.quorumkv.service.support.Workload;
import io.quorumkv.storage.contract.Seeds;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Backup and restore with real node processes and {@code scripts/qkv}, as an operator
 * runs them: three nodes RF 3 take writes and deletes at {@code 2/3} with a
 * {@link Ledger}; {@code qkv snapshot s1}, taken while the writes go on, prints its time
 * {@code T}; more writes follow (overwrites and deletes of the same keys, and new keys);
 * every node's snapshot verifies; the old cluster stops, and
 * {@code qkv restore --from DIR --as-of T} writes the three snapshots into a fresh
 * cluster of five nodes RF 3. There, every key reads its state as of {@code T} (what the
 * ledger's cut around the snapshot allows: every write acknowledged before it was asked,
 * and the writes in flight while it ran on either side) and nothing written after
 * {@code T} appears ({@code qkv clear-snapshot s1} removed the nodes' own copies). The
 * fresh cluster's tombstone grace is 1 s, so the restore is first refused as older than
 * the grace, then run with {@code --allow-older-than-grace}. Then the same into a single
 * node on H2, after a copy of the set with one byte flipped in a table was refused naming
 * the file.
 */
@ExtendWith({ FaultFolders.KeepOnFailure.class, Seeds.class })
class BackupRestoreIT {

	static final Duration AWAIT = Duration.ofSeconds(60);

	final KvClient client = new KvClient(Duration.ofSeconds(5));

	Path root;

	NodeProcesses old;

	NodeProcesses fresh;

	@AfterEach
	void stop() {
		if (this.old != null) {
			this.old.close();
		}
		if (this.fresh != null) {
			this.fresh.close();
		}
		if (this.root != null) {
			FaultFolders.deleteUnlessFailed(this.root);
		}
	}

	@Test
	void aSnapshotSetRestoresIntoAClusterOfAnotherSizeAsOfItsTime(Seeds.Seed given) throws Exception {
		long seed = given.value();
		System.out.println("BackupRestoreIT: " + Seeds.rerun(seed));
		this.root = FaultFolders.create("backup");
		Map<String, String> settings = new HashMap<>(NodeProcesses.SMALL_LSM);
		settings.put("quorumkv.cluster.replication-factor", "3");
		settings.put("management.endpoints.web.exposure.include", "health,quorumkv");
		settings.put("quorumkv.storage.lsm.incremental-backups", "true");
		this.old = new NodeProcesses(this.root.resolve("old"), 3, false, settings, List.of("-Xmx256m")).startAll();
		List<String> oldUrls = List.of(this.old.url(0), this.old.url(1), this.old.url(2));

		Ledger before = new Ledger();
		Ledger.Cut cut;
		Result snapshot;
		try (Workload load = Workload.rotating(before, "bk", 4, 150, "2/3", () -> oldUrls, seed,
				Duration.ofSeconds(5))) {
			before.awaitMoreAcked("writes before the snapshot", 1_500, AWAIT);
			cut = before.openCut();
			snapshot = qkv("--nodes", String.join(",", oldUrls), "snapshot", "s1");
			cut.close();
			before.awaitMoreAcked("writes after the snapshot", 300, AWAIT);
		}
		System.out.println("BackupRestoreIT writes around the snapshot: " + before);
		assertThat(before.deletesAcked.get()).isPositive();
		assertThat(snapshot.exit()).as(snapshot.output()).isZero();
		Ledger asOfT = cut.asLedger(before.keys());
		System.out.println("BackupRestoreIT writes in flight around the snapshot: " + cut.writesInWindow());
		assertThat(cut.writesInWindow()).as("writes went on while the snapshot ran").isPositive();
		Matcher time = Pattern.compile("snapshot s1: T = (\\d+)").matcher(snapshot.output());
		assertThat(time.find()).as(snapshot.output()).isTrue();
		long t = Long.parseLong(time.group(1));
		System.out.println("BackupRestoreIT snapshot:\n" + snapshot.output());

		// After T: every key of the ledger overwritten or deleted, and new keys.
		Random random = new Random(seed);
		List<String> newKeys = new ArrayList<>();
		Map<String, Boolean> deletedAfter = new HashMap<>();
		for (String key : before.keys()) {
			String base = oldUrls.get(random.nextInt(oldUrls.size()));
			boolean delete = random.nextInt(4) == 0;
			int status = delete ? this.client.delete(base, key, "2/3") : this.client.put(base, key, "after-T", "2/3");
			assertThat(status).isIn(201, 202);
			deletedAfter.put(key, delete);
		}
		for (int i = 0; i < 100; i++) {
			String key = "new-" + i;
			assertThat(this.client.put(oldUrls.get(i % 3), key, "after-T", "2/3")).isEqualTo(201);
			newKeys.add(key);
		}
		assertThat(qkv("--nodes", String.join(",", oldUrls), "flush").exit()).isZero();
		// Every memtable into a table (linked into backups/), then a compaction.
		assertThat(qkv("--nodes", String.join(",", oldUrls), "compact").exit()).isZero();
		Result listed = qkv("--nodes", String.join(",", oldUrls), "snapshots");
		assertThat(listed.output()).containsPattern("(?m)^s1 +" + t + " +\\d+ +\\d+ ");

		// The snapshot set: each node's folder, copied as an operator ships them.
		Path set = this.root.resolve("set");
		for (int i = 0; i < 3; i++) {
			FileTrees.copy(this.old.dataFolder(i).resolve("snapshots/s1"), set.resolve("node" + i));
			FileTrees.copy(this.old.dataFolder(i).resolve("data/backups"),
					set.resolve("node" + i).resolve("incremental"));
		}
		Result verified = qkv("--nodes", oldUrls.get(0), "verify-snapshot", set.toString());
		assertThat(verified.exit()).as(verified.output()).isZero();
		assertThat(verified.output()).containsPattern("node0: ok: s1 of node .* as of " + t)
			.containsPattern("node2: ok: s1 .* \\d+ keys");
		System.out.println("BackupRestoreIT verify:\n" + verified.output());
		// The set reaches the compaction's flush of the node whose tables end first.
		Matcher reaches = Pattern.compile("incremental tables: a restore reaches (\\d+)").matcher(verified.output());
		long reach = Long.MAX_VALUE;
		int withIncrementals = 0;
		while (reaches.find()) {
			reach = Math.min(reach, Long.parseLong(reaches.group(1)));
			withIncrementals++;
		}
		assertThat(withIncrementals).as(verified.output()).isEqualTo(3);
		assertThat(reach).isGreaterThan(t);
		Result pruned = qkv("--nodes", String.join(",", oldUrls), "clear-backups", "--before", "s1");
		assertThat(pruned.exit()).as(pruned.output()).isZero();
		assertThat(pruned.output()).containsPattern("incremental tables up to \\d+ \\(in snapshot s1\\) cleared");
		Result cleared = qkv("--nodes", String.join(",", oldUrls), "clear-snapshot", "s1");
		assertThat(cleared.exit()).as(cleared.output()).isZero();
		assertThat(cleared.output()).contains("node " + oldUrls.get(2) + ": snapshot s1 cleared");
		for (int i = 0; i < 3; i++) {
			assertThat(this.old.dataFolder(i).resolve("snapshots/s1")).doesNotExist();
		}
		this.old.close();
		this.old = null;

		Map<String, String> target = new HashMap<>();
		target.put("quorumkv.cluster.replication-factor", "3");
		target.put("management.endpoints.web.exposure.include", "health,quorumkv");
		target.put("quorumkv.storage.tombstone-grace-period", "1s");
		this.fresh = new NodeProcesses(this.root.resolve("fresh"), 5, false, target, List.of("-Xmx256m")).startAll();
		String entry = this.fresh.url(0);
		Result refused = qkv("--nodes", entry, "restore", "--from", set.toString(), "--as-of", Long.toString(t));
		assertThat(refused.exit()).isEqualTo(1);
		assertThat(refused.output()).contains("older than the tombstone grace");
		Result restored = qkv("--nodes", entry, "restore", "--from", set.toString(), "--as-of", Long.toString(t),
				"--rate", "20000", "--allow-older-than-grace");
		assertThat(restored.exit()).as(restored.output()).isZero();
		System.out.println("BackupRestoreIT restore:\n" + restored.output());

		for (int node = 0; node < 5; node++) {
			LedgerCheck check = LedgerCheck.publicRead(asOfT, this.client, this.fresh.url(node), "2/3");
			System.out.println("BackupRestoreIT ledger through node " + node + ": " + check);
			assertThat(check.clean()).as("state as of T through node %d: %s", node, check).isTrue();
		}
		for (String key : newKeys) {
			assertThat(this.client.get(entry, key, "2/3").status()).as("key %s written after T", key).isEqualTo(404);
		}
		// Past the reach, refused; at it, the state after every write of the old cluster.
		Result past = qkv("--nodes", entry, "restore", "--from", set.toString(), "--as-of", Long.toString(reach + 1),
				"--allow-older-than-grace");
		assertThat(past.exit()).isEqualTo(1);
		assertThat(past.output()).contains("it can restore up to " + reach);
		Result later = qkv("--nodes", entry, "restore", "--from", set.toString(), "--as-of", Long.toString(reach),
				"--rate", "20000", "--allow-older-than-grace");
		assertThat(later.exit()).as(later.output()).isZero();
		System.out.println("BackupRestoreIT restore with the incremental tables:\n" + later.output());
		for (int node = 0; node < 5; node++) {
			String url = this.fresh.url(node);
			for (Map.Entry<String, Boolean> key : deletedAfter.entrySet()) {
				KvClient.Answer answer = this.client.get(url, key.getKey(), "2/3");
				assertThat(answer.status()).as("key %s through node %d", key.getKey(), node)
					.isEqualTo(key.getValue() ? 404 : 200);
				if (!key.getValue()) {
					assertThat(answer.body()).isEqualTo("after-T");
				}
			}
			for (String key : newKeys) {
				assertThat(this.client.get(url, key, "2/3").body()).as("key %s", key).isEqualTo("after-T");
			}
		}
		// The cut tells this later state from the state as of T.
		LedgerCheck afterT = LedgerCheck.publicRead(asOfT, this.client, entry, "2/3");
		assertThat(afterT.clean()).as("the state after T read as of T: %s", afterT).isFalse();
		this.fresh.close();

		// The same set into one node of another backend (H2); first a copy with one byte
		// flipped in a table, which is refused before anything is written.
		Path damaged = this.root.resolve("damaged");
		FileTrees.copy(set, damaged);
		Path table;
		try (Stream<Path> files = Files.list(damaged.resolve("node1/data"))) {
			table = files.filter((f) -> f.toString().endsWith(".sst")).findFirst().orElseThrow();
		}
		byte[] bytes = Files.readAllBytes(table);
		bytes[bytes.length / 2] ^= 0x10;
		Files.write(table, bytes);
		Map<String, String> h2 = new HashMap<>();
		h2.put("quorumkv.storage.backend", "h2");
		h2.put("management.endpoints.web.exposure.include", "health,quorumkv");
		this.fresh = new NodeProcesses(this.root.resolve("h2"), 1, false, h2, List.of("-Xmx256m")).startAll();
		String single = this.fresh.url(0);
		Result bad = qkv("--nodes", single, "restore", "--from", damaged.toString(), "--as-of", Long.toString(t),
				"--allow-older-than-grace");
		assertThat(bad.exit()).isEqualTo(1);
		assertThat(bad.output()).contains(table.getFileName().toString()).contains("damaged");
		assertThat(this.client.get(single, before.keys().iterator().next(), "1/1").status()).isEqualTo(404);
		Result intoH2 = qkv("--nodes", single, "restore", "--from", set.toString(), "--as-of", Long.toString(t),
				"--allow-older-than-grace");
		assertThat(intoH2.exit()).as(intoH2.output()).isZero();
		LedgerCheck check = LedgerCheck.publicRead(asOfT, this.client, single, "1/1");
		System.out.println("BackupRestoreIT ledger through one H2 node: " + check);
		assertThat(check.clean()).as("state as of T on one H2 node: %s", check).isTrue();
		for (String key : newKeys) {
			assertThat(this.client.get(single, key, "1/1").status()).as("key %s written after T", key).isEqualTo(404);
		}
	}

	private static Result qkv(String... args) throws IOException, InterruptedException {
		return Qkv.run(args);
	}

}
