package io.quorumkv.storage.lsm;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Keys;
import io.quorumkv.storage.lsm.io.Fault;
import io.quorumkv.storage.lsm.io.FaultFileIo;
import io.quorumkv.storage.lsm.io.FaultFileIo.Op;
import io.quorumkv.storage.lsm.io.FaultFileIo.Tear;
import io.quorumkv.storage.lsm.io.FileIo;
import org.jspecify.annotations.Nullable;

/**
 * Crash everywhere: cycles of a random workload ({@link CrashWorkload}) on a store over
 * the fault-injecting file layer, each ended by a power loss at a random operation of a
 * random kind (a WAL append or fsync, a table write, fsync or rename during a flush or a
 * compaction, a manifest write, fsync or rename, a folder sync, a deletion, or during the
 * recovery of the previous crash), with a random {@link Tear}. Each crash image is
 * recovered and checked against the {@link CrashModel} by the fsync policy's promise:
 *
 * <ul>
 * <li>{@code ALWAYS}: every acknowledged write survives;</li>
 * <li>{@code INTERVAL}: every write acknowledged more than {@link #WINDOW} before the
 * power loss survives (the syncer forces every {@code fsyncInterval}, far below it);</li>
 * <li>{@code NEVER}: every write acknowledged before a completed {@code flush()}
 * survives;</li>
 * <li>under every policy, a process crash ({@link Tear#KEEP_WRITTEN}) keeps every
 * acknowledged write.</li>
 * </ul>
 * The recovered state then is the next cycle's baseline.
 */
final class PowerLossRun {

	/** How late the INTERVAL syncer may be: many times its 10 ms interval. */
	static final Duration WINDOW = Duration.ofSeconds(1);

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	/**
	 * Where a cycle may lose power: an operation kind, the files it matches, and the
	 * range of the match (1-based) the power loss comes at.
	 */
	record CrashPoint(String name, Op op, String files, int first, int last) {

		CrashPoint(String name, Op op, String files, int upTo) {
			this(name, op, files, 1, upTo);
		}

		/** Exactly at the {@code nth} match. */
		static CrashPoint at(String name, Op op, String files, int nth) {
			return new CrashPoint(name + " #" + nth, op, files, nth, nth);
		}

	}

	static final List<CrashPoint> EVERYWHERE = List.of(new CrashPoint("WAL append", Op.WRITE, "wal-.*", 300),
			new CrashPoint("WAL fsync", Op.SYNC, "wal-.*", 40),
			new CrashPoint("table write (flush, compaction)", Op.WRITE, ".*\\.sst\\.tmp", 12),
			new CrashPoint("table fsync", Op.SYNC, ".*\\.sst\\.tmp", 12),
			new CrashPoint("table rename", Op.RENAME, ".*\\.sst", 12),
			new CrashPoint("manifest write", Op.WRITE, "MANIFEST\\.tmp", 12),
			new CrashPoint("manifest fsync", Op.SYNC, "MANIFEST\\.tmp", 12),
			new CrashPoint("manifest rename", Op.RENAME, "MANIFEST", 12),
			new CrashPoint("folder sync", Op.SYNC_DIRECTORY, ".*", 25),
			new CrashPoint("WAL segment deletion", Op.DELETE, "wal-.*", 8),
			new CrashPoint("table deletion (compaction input)", Op.DELETE, ".*\\.sst", 8),
			new CrashPoint("file creation", Op.CREATE, ".*", 3), new CrashPoint("a first rename", Op.RENAME, ".*", 2),
			new CrashPoint("WAL tail truncation (recovery)", Op.TRUNCATE, ".*", 1));

	/** What a run found. */
	record Outcome(List<String> anomalies, long operations, int crashes, long faults, List<String> crashPoints) {

		String summary() {
			return this.operations + " operations, " + this.crashes + " power losses, " + this.faults
					+ " faults injected, " + this.anomalies.size() + " anomalies";
		}

	}

	private final FsyncPolicy policy;

	private final long seed;

	private final Path root;

	private final UnaryOperator<FileIo> engineIo;

	private final List<CrashPoint> points;

	private final Random random;

	private final CrashModel model = new CrashModel();

	private final List<String> anomalies = new ArrayList<>();

	private final List<String> crashPoints = new ArrayList<>();

	private Tear tear = Tear.KEEP_WRITTEN;

	private String armed = "";

	private int images;

	/** What the last crash's policy requires to survive it. */
	private Predicate<CrashModel.Write> required = (w) -> true;

	private long operations;

	private long faults;

	/**
	 * @param engineIo wraps the file layer the engine gets: the identity, or a
	 * deliberately broken engine (one that skips a force) to show the checks catch it
	 */
	PowerLossRun(FsyncPolicy policy, long seed, Path root, UnaryOperator<FileIo> engineIo) {
		this(policy, seed, root, engineIo, EVERYWHERE);
	}

	/** A run whose power losses come only at {@code points}. */
	PowerLossRun(FsyncPolicy policy, long seed, Path root, UnaryOperator<FileIo> engineIo, List<CrashPoint> points) {
		this.points = points;
		this.policy = policy;
		this.seed = seed;
		this.root = root;
		this.engineIo = engineIo;
		this.random = new Random(seed);
	}

	static LsmOptions options(Path dir, FsyncPolicy policy) {
		return LsmOptions.defaults(dir)
			.withMemtableSize(4096)
			.withBlockSize(256)
			.withCompaction(2, 8 << 10, 2, 4096)
			.withMaxLevels(4)
			.withFsync(policy)
			.withFsyncInterval(Duration.ofMillis(10));
	}

	/** Runs {@code cycles} crash cycles of about {@code operationsPerCycle} each. */
	Outcome run(int cycles, int operationsPerCycle) {
		Path dir = this.root.resolve("image-0");
		for (int cycle = 1; cycle <= cycles && this.anomalies.isEmpty(); cycle++) {
			Opened opened = open(dir, true);
			if (opened == null || !check(opened.storage(), "after recovery into " + opened.layer().dir())) {
				close(opened);
				break;
			}
			FaultFileIo layer = opened.layer();
			CrashWorkload workload = new CrashWorkload(opened.storage(), this.model, this.random, this.policy, WINDOW);
			this.operations += workload.run(operationsPerCycle, layer::isDead);
			this.anomalies.addAll(workload.anomalies());
			if (!layer.isDead()) {
				this.armed = "end of the workload / " + this.tear;
				layer.powerLoss(this.tear, this.root.resolve("image-" + cycle + "-end"));
			}
			close(opened);
			crashed(layer);
			dir = layer.image().folder();
		}
		if (this.anomalies.isEmpty()) {
			Opened last = open(dir, false);
			if (last != null) {
				check(last.storage(), "after the last recovery");
				close(last);
			}
		}
		return new Outcome(List.copyOf(this.anomalies), this.operations, this.crashPoints.size(), this.faults,
				List.copyOf(this.crashPoints));
	}

	/** A store and the file layer under it. */
	private record Opened(LsmStorage storage, FaultFileIo layer) {
	}

	/**
	 * A file layer on {@code dir}, with a power loss armed at a random operation of a
	 * random kind (it may fire during the recovery already).
	 */
	private FaultFileIo layer(Path dir, boolean armed) {
		FaultFileIo layer = new FaultFileIo(dir, this.random.nextLong());
		this.tear = Tear.values()[this.random.nextInt(Tear.values().length)];
		if (armed) {
			CrashPoint point = this.points.get(this.random.nextInt(this.points.size()));
			this.armed = point.name() + " / " + this.tear;
			int nth = point.first() + this.random.nextInt(point.last() - point.first() + 1);
			layer.inject(Fault.at(point.op(), point.files(), nth)
				.powerLoss(this.tear, this.root.resolve("image-" + (++this.images))));
		}
		return layer;
	}

	/** Notes a power loss: what it cut, and what the policy requires to survive it. */
	private void crashed(FaultFileIo layer) {
		this.crashPoints.add(this.armed);
		this.faults += layer.injected();
		this.required = requiredBy(this.tear, layer.image().atNanos());
	}

	private static void close(@Nullable Opened opened) {
		if (opened != null) {
			opened.storage().close();
		}
	}

	/** What the policy requires of a crash with {@code tear} at {@code cutNanos}. */
	private Predicate<CrashModel.Write> requiredBy(Tear tear, long cutNanos) {
		long window = WINDOW.toNanos();
		return (w) -> this.model.isAcked(w) && (tear == Tear.KEEP_WRITTEN || this.policy == FsyncPolicy.ALWAYS
				|| (this.policy == FsyncPolicy.INTERVAL && this.model.ackedAt(w) < cutNanos - window));
	}

	/**
	 * Opens {@code dir}; a power loss during the recovery itself is recovered from its
	 * own image (at most twice in a row).
	 */
	private @Nullable Opened open(Path dir, boolean armed) {
		Path current = dir;
		for (int attempt = 0; attempt < 3; attempt++) {
			// The recovery of a crashed recovery may crash again, once.
			FaultFileIo layer = layer(current, armed && (attempt == 0 || (attempt == 1 && this.random.nextBoolean())));
			try {
				return new Opened(LsmStorage.open(options(current, this.policy), this.engineIo.apply(layer)), layer);
			}
			catch (RuntimeException ex) {
				if (!layer.isDead()) {
					this.anomalies.add("recovery of " + current + " failed: " + ex);
					return null;
				}
				// Nothing was written since the last crash: its requirement stands.
				this.crashPoints.add("recovery, at " + this.armed);
				this.faults += layer.injected();
				current = layer.image().folder();
			}
		}
		this.anomalies.add("recovery of " + dir + " crashed too often");
		return null;
	}

	/**
	 * Scans the recovered store, checks it against the model and makes it the baseline.
	 */
	private boolean check(LsmStorage storage, String when) {
		Map<byte[], Entry> found = new TreeMap<>(Keys.ORDER);
		try {
			for (Entry e : storage.scan(new byte[] { 0 }, null).collectList().block(TIMEOUT)) {
				found.put(e.key(), e);
			}
			for (byte[] key : this.model.keys()) {
				Entry got = storage.get(key).block(TIMEOUT);
				if (got == null ? found.containsKey(key) : !got.equals(found.get(key))) {
					this.anomalies.add(when + ": get and scan disagree on " + Keys.toDisplayString(key));
				}
			}
		}
		catch (RuntimeException ex) {
			this.anomalies.add(when + ": reading failed: " + ex);
			return false;
		}
		List<String> wrong = this.model.checkAll(found, this.required);
		String crash = this.crashPoints.isEmpty() ? "first open" : this.crashPoints.getLast();
		wrong.forEach((a) -> this.anomalies.add(when + " (" + crash + "): " + a));
		this.model.recovered(found);
		return wrong.isEmpty();
	}

}
