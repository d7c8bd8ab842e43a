package io.quorumkv.service.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;

import io.quorumkv.service.support.FaultFolders;
import io.quorumkv.service.support.KvClient;
import io.quorumkv.service.support.TestCluster;
import io.quorumkv.storage.contract.Seeds;
import io.quorumkv.storage.lsm.io.FaultFileIo.Image;
import io.quorumkv.storage.lsm.io.FaultFileIo.Tear;
import io.quorumkv.storage.lsm.io.FileIo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Power loss across the whole cluster at once: three in-JVM nodes (replication factor 3,
 * writes at {@code 2/3}), each node's LSM stores (its data and its hints) over a
 * fault-injecting file layer of their own ({@link NodeDisks}). Writers write their own
 * keys and record every acknowledged write with the time it was acknowledged; once a
 * number of writes the seed picks is acknowledged, every node's disks lose their power at
 * once (each keeps only what was forced, unsynced bytes dropped or torn), the nodes are
 * stopped without reaching their disks again and started on what the disks kept, and
 * every key is read back at {@code 3/3}. With {@code always} no acknowledged write may be
 * missing (a newer write of its key may stand in its place); with {@code interval} none
 * acknowledged more than {@link #WINDOW} before the cut. Writes lost within the window
 * are counted and printed. The two policies take turns (each restart starts the nodes
 * with the other): four cuts, twenty with {@code -Pfaults-long};
 * {@code -Dquorumkv.test.seed=N} repeats a run.
 */
@ExtendWith({ Seeds.class, FaultFolders.KeepOnFailure.class })
class ClusterPowerLossTest {

	private static final boolean LONG = Boolean.getBoolean("quorumkv.faults.long");

	/** The fsync policies, each in turn. */
	private static final List<String> POLICIES = List.of("always", "interval");

	private static final int CUTS = LONG ? 20 : 4;

	private static final int NODES = 3;

	/** The nodes' {@code fsync-interval} (the default). */
	private static final Duration INTERVAL = Duration.ofMillis(100);

	/**
	 * The documented margin over the interval: how late the syncer thread may force on a
	 * loaded machine (docs/reliability.md, as the LSM's own power-loss test allows).
	 */
	private static final Duration MARGIN = Duration.ofSeconds(1);

	/** With {@code interval}, writes acknowledged longer ago than this must survive. */
	private static final Duration WINDOW = INTERVAL.plus(MARGIN);

	/** How long writes go on past the window before a cut may come. */
	private static final Duration AGED = Duration.ofMillis(400);

	private static final int WRITERS = 6;

	private static final int KEYS_PER_WRITER = 8;

	private final KvClient client = new KvClient(Duration.ofSeconds(10));

	/**
	 * Per policy: writes acknowledged, lost, and the oldest lost one's age (ns;
	 * {@code Long.MIN_VALUE} while none is lost).
	 */
	private final Map<String, long[]> totals = new TreeMap<>();

	@Test
	void acknowledgedWritesSurviveAPowerCutOfEveryNode(Seeds.Seed seed) throws Exception {
		System.out.println("[power-loss] " + Seeds.rerun(seed.value()));
		SplittableRandom random = new SplittableRandom(seed.value());
		Path root = FaultFolders.create("power-loss");
		NodeDisks[] disks = new NodeDisks[NODES];
		// Memtables larger than a cut's writes: no flush makes them durable before the
		// cut, so every write the policy leaves unforced stands on the WAL's force alone
		// (a syncer that skips its period loses writes older than the window at every
		// interval cut). Power cuts in flushes and compactions are the LSM's own tests'.
		TestCluster cluster = new TestCluster(root, NODES, Map.of("quorumkv.storage.lsm.fsync-interval",
				INTERVAL.toMillis() + "ms", "quorumkv.storage.lsm.memtable-size", "4MB"));
		for (int i = 0; i < NODES; i++) {
			int node = i;
			cluster.withBean(node, FileIo.class,
					() -> disks[node] = new NodeDisks(root.resolve("node" + node), random.nextLong()));
		}
		List<String> failures = new ArrayList<>();
		try {
			startAll(cluster, POLICIES.get(0));
			for (int cut = 1; cut <= CUTS; cut++) {
				// The policies take turns: each restart after a cut starts the next one.
				String policy = POLICIES.get((cut - 1) % POLICIES.size());
				failures.addAll(cutAndCheck(cluster, disks, policy, POLICIES.get(cut % POLICIES.size()), cut, random));
			}
		}
		finally {
			cluster.close();
		}
		this.totals.forEach((policy, total) -> System.out.printf(
				"[power-loss] %s: %,d acknowledged over %d cuts, %d lost, the oldest acknowledged %s before its cut%n",
				policy, total[0], CUTS / POLICIES.size(), total[1],
				(total[1] == 0) ? "-" : total[2] / 1_000_000 + " ms"));
		assertThat(failures).as("acknowledged writes lost (%s)", Seeds.rerun(seed.value())).isEmpty();
		FaultFolders.deleteUnlessFailed(root);
	}

	private static void startAll(TestCluster cluster, String policy) {
		for (int i = 0; i < NODES; i++) {
			cluster.start(i, Map.of("quorumkv.storage.lsm.fsync", policy));
		}
	}

	/** One cut: writes, the power of every node cut at once, restarts, the check. */
	private List<String> cutAndCheck(TestCluster cluster, NodeDisks[] disks, String policy, String next, int cut,
			SplittableRandom random) throws Exception {
		AckedWrites writes = new AckedWrites("cut" + cut, WRITERS, KEYS_PER_WRITER,
				(writer) -> cluster.url(writer % NODES), "2/3");
		int target = 200 + random.nextInt(1000);
		// Each policy's first cut drops every unsynced byte (a torn tail keeps some,
		// which
		// may hide a missing force); later ones may tear.
		int draw = random.nextInt(4);
		Tear tear = (cut <= POLICIES.size()) ? Tear.DROP_UNSYNCED : switch (draw) {
			case 0 -> Tear.TORN_PREFIX;
			case 1 -> Tear.TORN_PREFIX_THEN_ZEROS;
			default -> Tear.DROP_UNSYNCED;
		};
		long windowNanos = WINDOW.toNanos();
		long cutNanos;
		List<Image> images = new ArrayList<>();
		writes.start();
		try {
			// The cut comes at a write count the seed picks, once some writes are older
			// than the window (so that interval's promise is tested too).
			awaitState(Duration.ofSeconds(120), () -> {
				List<AckedWrites.Ack> acks = writes.acks();
				return acks.size() >= target
						&& System.nanoTime() - acks.get(0).ackNanos() > windowNanos + AGED.toNanos();
			}, "acknowledged writes before cut " + cut);
			cutNanos = System.nanoTime();
			for (NodeDisks disk : disks) {
				images.addAll(disk.cut(tear));
			}
		}
		finally {
			writes.stop();
		}
		long cutMillis = (images.get(images.size() - 1).atNanos() - cutNanos) / 1_000_000;
		for (int i = 0; i < NODES; i++) {
			cluster.halt(i);
		}
		for (NodeDisks disk : disks) {
			disk.restore();
		}
		startAll(cluster, next);
		long hints = 0;
		for (int i = 0; i < NODES; i++) {
			hints += cluster.bean(i, HintStore.class).footprint().block(Duration.ofSeconds(30));
		}
		// Under always, no acknowledged write may be lost, also one acknowledged while
		// the disks were being cut (each was forced on two replicas before its answer).
		Verdict verdict = check(cluster, writes, cutNanos, policy.equals("always") ? Long.MIN_VALUE : windowNanos);
		long dropped = images.stream().mapToLong(Image::unsyncedBytesDropped).sum();
		System.out
			.printf("[power-loss] %s cut %d/%d (%s, all %d disks in %d ms, %,d unsynced bytes dropped): %,d acknowledged, "
					+ "%,d not (the cut's included); %d lost, acknowledged %s before the cut (window %d ms); %d keys read "
					+ "back; %d hints kept through the cut%n", policy, cut, CUTS, tear, images.size(), cutMillis,
					dropped, writes.acks().size(), writes.failures(), verdict.lost(), verdict.lostAges(),
					WINDOW.toMillis(), verdict.keys(), hints);
		this.totals.merge(policy, new long[] { writes.acks().size(), verdict.lost(), verdict.oldestLostNanos() },
				(a, b) -> new long[] { a[0] + b[0], a[1] + b[1], Math.max(a[2], b[2]) });
		return verdict.failures().stream().map((failure) -> policy + ", cut " + cut + ": " + failure).toList();
	}

	/**
	 * Reads every key at {@code 3/3} and holds it against what was acknowledged: a write
	 * missing (its key reads as an older write, or absent) is lost; a lost write
	 * acknowledged more than {@code windowNanos} before the cut, or a value never
	 * written, is a failure.
	 */
	private Verdict check(TestCluster cluster, AckedWrites writes, long cutNanos, long windowNanos) {
		Map<String, Long> read = new HashMap<>();
		List<String> failures = new ArrayList<>();
		List<String> keys = writes.keys();
		for (int i = 0; i < keys.size(); i++) {
			String key = keys.get(i);
			String url = cluster.url(i % NODES);
			KvClient.Answer[] answer = new KvClient.Answer[1];
			awaitState(Duration.ofSeconds(60), () -> {
				answer[0] = this.client.get(url, key, "3/3");
				return answer[0].status() == 200 || answer[0].status() == 404;
			}, "a 3/3 read of " + key + " after the restart");
			long seq = (answer[0].status() == 404) ? 0 : AckedWrites.seqOf(key, answer[0].body());
			if (seq < 0 || seq > writes.sent(key)) {
				failures.add(key + " reads " + answer[0].body() + ", which was never written");
			}
			read.put(key, seq);
		}
		int lost = 0;
		long youngest = Long.MAX_VALUE;
		long oldest = Long.MIN_VALUE;
		for (AckedWrites.Ack ack : writes.acks()) {
			if (read.get(ack.key()) >= ack.seq()) {
				continue;
			}
			lost++;
			long age = cutNanos - ack.ackNanos();
			youngest = Math.min(youngest, age);
			oldest = Math.max(oldest, age);
			if (age >= windowNanos && failures.size() < 20) {
				failures.add(ack.key() + "#" + ack.seq() + " acknowledged " + age / 1_000_000 + " ms before the cut, "
						+ "read back as #" + read.get(ack.key()));
			}
		}
		String ages = (lost == 0) ? "-" : "from " + youngest / 1_000_000 + " to " + oldest / 1_000_000 + " ms";
		return new Verdict(lost, ages, oldest, keys.size(), failures);
	}

	/** Waits for {@code state}, polling it, at most {@code limit}. */
	private static void awaitState(Duration limit, BooleanSupplier state, String what) {
		long deadline = System.nanoTime() + limit.toNanos();
		while (!state.getAsBoolean()) {
			if (System.nanoTime() > deadline) {
				throw new AssertionError("no " + what + " within " + limit);
			}
			try {
				Thread.sleep(20);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
	}

	private record Verdict(int lost, String lostAges, long oldestLostNanos, int keys, List<String> failures) {
	}

}
