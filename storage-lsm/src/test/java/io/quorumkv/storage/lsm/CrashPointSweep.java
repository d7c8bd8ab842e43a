package io.quorumkv.storage.lsm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Keys;
import io.quorumkv.storage.lsm.io.Fault;
import io.quorumkv.storage.lsm.io.FaultFileIo;
import io.quorumkv.storage.lsm.io.FaultFileIo.Tear;
import io.quorumkv.storage.lsm.io.FileIo;
import org.jspecify.annotations.Nullable;

/**
 * Crash points enumerated, not sampled (as LevelDB's and mini-lsm's truncation sweeps):
 * one fixed workload (opening an empty store, writes, overwrites, deletes, a batch, a
 * late write that must lose, an explicit {@code flush()}, three forced memtable flushes
 * (each a table and a manifest rewrite), a full compaction (a manifest rewrite and the
 * deletion of its inputs), more writes and {@code close()}), run once to count its file
 * operations, then once per operation {@code k} with the power cut at the {@code k}-th,
 * for each {@link Tear}. Each crash image is recovered and checked against the
 * {@link CrashModel} by the fsync policy's promise, as {@link PowerLossRun} does for its
 * random crash points.
 *
 * <p>
 * The order of the operations is the same in every run: the memtable is large enough
 * never to fill, level 0 never reaches its compaction trigger, and the workload waits for
 * each flush and compaction it forces (a forced flush also waits for the spare WAL
 * segment the flush thread creates). Only {@code INTERVAL}'s syncer, which forces the WAL
 * on a timer, interleaves at varying places: its operations are not numbered (the
 * {@code k}-th operation is the {@code k}-th of every other thread), and a write it may
 * have forced is required to survive only once acknowledged more than
 * {@link PowerLossRun#WINDOW} before the cut, the policy's documented window.
 */
final class CrashPointSweep {

	/** The seed of the workload's keys and values: the workload is fixed. */
	static final long WORKLOAD_SEED = 52;

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	/** One step of the workload. */
	private record Step(String name, Action action) {
	}

	@FunctionalInterface
	private interface Action {

		void run(Run run);

	}

	/** The workload, step by step. */
	private static final List<Step> SCRIPT;

	static {
		List<Step> steps = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			int k = i;
			steps.add(new Step("put key " + k, (r) -> r.put(k)));
		}
		for (int k : new int[] { 3, 0, 8, 3 }) {
			steps.add(new Step("overwrite key " + k, (r) -> r.put(k)));
		}
		steps.add(new Step("delete key 2", (r) -> r.delete(2)));
		steps.add(new Step("delete key 5", (r) -> r.delete(5)));
		steps.add(new Step("batch: put 10, put 11, delete 3", (r) -> r.batch(10, 11, -3)));
		steps.add(new Step("late write of key 4 (must lose)", (r) -> r.latePut(4)));
		steps.add(new Step("flush()", Run::flush));
		steps.add(new Step("put key 12", (r) -> r.put(12)));
		steps.add(new Step("overwrite key 0", (r) -> r.put(0)));
		steps.add(new Step("forced memtable flush 1", Run::forceFlush));
		steps.add(new Step("overwrite key 1", (r) -> r.put(1)));
		steps.add(new Step("overwrite key 6", (r) -> r.put(6)));
		steps.add(new Step("delete key 7", (r) -> r.delete(7)));
		steps.add(new Step("put key 13", (r) -> r.put(13)));
		steps.add(new Step("forced memtable flush 2", Run::forceFlush));
		steps.add(new Step("delete key 10", (r) -> r.delete(10)));
		steps.add(new Step("overwrite key 11", (r) -> r.put(11)));
		steps.add(new Step("put key 14", (r) -> r.put(14)));
		steps.add(new Step("forced memtable flush 3", Run::forceFlush));
		steps.add(new Step("full compaction", Run::compact));
		steps.add(new Step("put key 15", (r) -> r.put(15)));
		steps.add(new Step("overwrite key 12", (r) -> r.put(12)));
		steps.add(new Step("delete key 13", (r) -> r.delete(13)));
		steps.add(new Step("put key 2 again", (r) -> r.put(2)));
		SCRIPT = List.copyOf(steps);
	}

	private final FsyncPolicy policy;

	private final Path root;

	/** The numbered operations of the run without a fault, in order ({@link #count}). */
	private List<String> operations = List.of();

	private final UnaryOperator<FileIo> engineIo;

	CrashPointSweep(FsyncPolicy policy, Path root) {
		this(policy, root, UnaryOperator.identity());
	}

	/**
	 * @param engineIo wraps the file layer the engine writes through: the identity, or a
	 * deliberately broken engine to show the sweep catches it (its recoveries use the
	 * layer as it is)
	 */
	CrashPointSweep(FsyncPolicy policy, Path root, UnaryOperator<FileIo> engineIo) {
		this.policy = policy;
		this.root = root;
		this.engineIo = engineIo;
	}

	static LsmOptions options(Path dir, FsyncPolicy policy) {
		return LsmOptions.defaults(dir)
			// Never full: only the workload's forced flushes rotate the memtable.
			.withMemtableSize(1 << 20)
			.withBlockSize(256)
			// Level 0 never reaches its trigger; output tables are cut at 4 KiB.
			.withCompaction(16, 1 << 20, 10, 4096)
			.withMaxLevels(4)
			.withFsync(policy)
			.withFsyncInterval(Duration.ofMillis(10));
	}

	/** The name prefix of the syncer's thread, whose operations are not numbered. */
	private @Nullable String unnumbered() {
		return (this.policy == FsyncPolicy.INTERVAL) ? "lsm-wal-syncer-" : null;
	}

	/**
	 * Runs the workload without a fault.
	 * @return how many file operations it made (its crash points)
	 */
	long count() {
		Path dir = this.root.resolve("count");
		FaultFileIo layer = new FaultFileIo(dir, 0);
		List<String> seen = recording(layer);
		Run run = new Run(layer, new CrashModel());
		run.all();
		if (!run.failures.isEmpty() || layer.isDead()) {
			throw new IllegalStateException("the workload failed without a fault: " + run.failures);
		}
		delete(dir);
		this.operations = List.copyOf(seen);
		return this.operations.size();
	}

	/**
	 * Records the numbered operations on {@code layer} (kind and file name), in the order
	 * they are made.
	 */
	private List<String> recording(FaultFileIo layer) {
		List<String> seen = Collections.synchronizedList(new ArrayList<>());
		String skip = unnumbered();
		layer.onEachOperation((op, path) -> {
			if (skip == null || !Thread.currentThread().getName().startsWith(skip)) {
				boolean folder = path.toAbsolutePath().normalize().equals(layer.dir());
				seen.add(op + " " + (folder ? "the folder" : path.getFileName()));
			}
		});
		return seen;
	}

	/**
	 * Runs the workload with the power cut at its {@code k}-th file operation, recovers
	 * the image and checks it.
	 * @return the anomalies (empty when the recovered state is one the policy accepts)
	 */
	List<String> crashAt(long k, Tear tear, long seed) {
		Path dir = this.root.resolve("run-" + k + "-" + tear);
		Path image = this.root.resolve("image-" + k + "-" + tear);
		FaultFileIo layer = new FaultFileIo(dir, seed);
		Fault fault = Fault.atOperation(k).powerLoss(tear, image);
		String skip = unnumbered();
		layer.inject((skip != null) ? fault.skippingThreads(skip) : fault);
		List<String> seen = recording(layer);
		CrashModel model = new CrashModel();
		Run run = new Run(layer, model);
		run.all();
		List<String> anomalies = new ArrayList<>();
		FaultFileIo.Image cut = layer.image();
		String where = "crash at operation " + k + " (" + this.operations.get((int) k - 1) + ", " + tear + ", during "
				+ run.step + ")";
		if (cut == null) {
			anomalies.add(where + ": the power loss never came; the workload made fewer operations than counted");
			return anomalies;
		}
		List<String> upToCut = List.copyOf(seen.subList(0, (int) Math.min(k, seen.size())));
		if (!upToCut.equals(this.operations.subList(0, (int) k))) {
			// The sweep would not try every operation: the workload is not deterministic.
			anomalies.add(where + ": the operations up to the cut differ from the counted run's: " + upToCut);
		}
		for (String failure : run.failures) {
			anomalies.add(where + ": " + failure);
		}
		Predicate<CrashModel.Write> required = requiredBy(model, tear, cut.atNanos());
		try (LsmStorage recovered = LsmStorage.open(options(image, this.policy), new FaultFileIo(image, seed))) {
			Map<byte[], Entry> found = readAll(recovered, model, where, anomalies);
			model.checkAll(found, required).forEach((a) -> anomalies.add(where + ": " + a));
			// The recovered store takes a write and recovers again: a recovery must leave
			// files the next one can read (as LevelDB's fault-injection test reopens and
			// goes on after each dropped state).
			model.recovered(found);
			Entry marker = Entry.value(key(99), key(99), model.tick());
			model.acked(model.issue(List.of(marker)), System.nanoTime());
			recovered.upsert(marker).block(TIMEOUT);
		}
		catch (RuntimeException ex) {
			anomalies.add(where + ": recovery failed: " + ex);
			return anomalies;
		}
		model.durable();
		try (LsmStorage again = LsmStorage.open(options(image, this.policy), new FaultFileIo(image, seed))) {
			Map<byte[], Entry> found = readAll(again, model, where + ", second recovery", anomalies);
			model.checkAll(found, (w) -> true).forEach((a) -> anomalies.add(where + ", second recovery: " + a));
		}
		catch (RuntimeException ex) {
			anomalies.add(where + ": the second recovery failed: " + ex);
		}
		if (anomalies.isEmpty()) {
			delete(dir);
			delete(image);
		}
		return anomalies;
	}

	/**
	 * Everything {@code storage} holds, by a full scan; notes a key whose get disagrees
	 * with the scan.
	 */
	private static Map<byte[], Entry> readAll(LsmStorage storage, CrashModel model, String where,
			List<String> anomalies) {
		Map<byte[], Entry> found = new TreeMap<>(Keys.ORDER);
		for (Entry e : storage.scan(new byte[] { 0 }, null).collectList().block(TIMEOUT)) {
			found.put(e.key(), e);
		}
		for (byte[] key : model.keys()) {
			Entry got = storage.get(key).block(TIMEOUT);
			if (got == null ? found.containsKey(key) : !got.equals(found.get(key))) {
				anomalies.add(where + ": get and scan disagree on " + Keys.toDisplayString(key));
			}
		}
		return found;
	}

	/**
	 * What the policy requires to survive a crash with {@code tear} at {@code cutNanos}.
	 */
	private Predicate<CrashModel.Write> requiredBy(CrashModel model, Tear tear, long cutNanos) {
		long window = PowerLossRun.WINDOW.toNanos();
		return (w) -> model.isAcked(w) && (tear == Tear.KEEP_WRITTEN || this.policy == FsyncPolicy.ALWAYS
				|| (this.policy == FsyncPolicy.INTERVAL && model.ackedAt(w) < cutNanos - window));
	}

	private static void delete(Path dir) {
		if (!Files.exists(dir)) {
			return;
		}
		try (Stream<Path> files = Files.walk(dir)) {
			for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
				Files.delete(p);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * One run of the workload on a store over {@code layer}: opens an empty store, runs
	 * the script until the first failed step, closes. Every write is recorded in the
	 * model, and acknowledged when it completes; a completed {@code flush()}, forced
	 * flush or {@code close()} makes every acknowledged write durable.
	 */
	private final class Run {

		private final FaultFileIo layer;

		private final CrashModel model;

		private final Random random = new Random(WORKLOAD_SEED);

		/** Failures that are not the power loss's doing. */
		final List<String> failures = new ArrayList<>();

		private @Nullable LsmStorage storage;

		String step = "open";

		Run(FaultFileIo layer, CrashModel model) {
			this.layer = layer;
			this.model = model;
		}

		void all() {
			try {
				this.storage = LsmStorage.open(options(this.layer.dir(), CrashPointSweep.this.policy),
						CrashPointSweep.this.engineIo.apply(this.layer));
			}
			catch (RuntimeException ex) {
				failed(ex);
				return;
			}
			try {
				// Waits for the spare WAL segment the flush thread creates after the
				// recovery (a forced flush of an empty memtable flushes nothing).
				if (!attempt(() -> join(this.storage.forceFlush()))) {
					return;
				}
				for (Step s : SCRIPT) {
					this.step = s.name();
					int before = this.failures.size();
					s.action().run(this);
					if (this.failures.size() > before || this.layer.isDead() || this.stopped) {
						return;
					}
				}
			}
			finally {
				if (!this.layer.isDead()) {
					this.step = "close";
				}
				this.storage.close();
				if (!this.layer.isDead() && this.storage.stats().failure() == null) {
					this.model.durable();
				}
			}
		}

		/** A step failed because the power is gone: the workload ends there. */
		private boolean stopped;

		private byte[] value() {
			byte[] value = new byte[new int[] { 0, 8, 40, 120 }[this.random.nextInt(4)]];
			this.random.nextBytes(value);
			return value;
		}

		void put(int k) {
			write(List.of(Entry.value(key(k), value(), this.model.tick())));
		}

		void latePut(int k) {
			write(List.of(Entry.value(key(k), value(), this.model.past(this.random))));
		}

		void delete(int k) {
			write(List.of(Entry.tombstone(key(k), this.model.tick())));
		}

		/** Puts the keys given positive, deletes those given negative. */
		void batch(int... keys) {
			List<Entry> entries = new ArrayList<>();
			for (int k : keys) {
				entries.add((k >= 0) ? Entry.value(key(k), value(), this.model.tick())
						: Entry.tombstone(key(-k), this.model.tick()));
			}
			write(entries);
		}

		private void write(List<Entry> entries) {
			long batch = this.model.issue(entries);
			attempt(() -> {
				if (entries.size() == 1) {
					this.storage.upsert(entries.getFirst()).block(TIMEOUT);
				}
				else {
					this.storage.upsertAll(entries).block(TIMEOUT);
				}
				this.model.acked(batch, System.nanoTime());
			});
		}

		void flush() {
			durable(() -> this.storage.flush().block(TIMEOUT));
		}

		void forceFlush() {
			durable(() -> join(this.storage.forceFlush()));
		}

		void compact() {
			attempt(() -> join(this.storage.forceCompaction()));
		}

		/** A durable point: everything acknowledged before it survives any crash. */
		private void durable(Runnable action) {
			if (attempt(action) && this.storage.stats().failure() == null && !this.layer.isDead()) {
				this.model.durable();
			}
		}

		/**
		 * Runs {@code action}; false when it failed. A failure once the power is gone
		 * ends the workload; one with the power on is recorded.
		 */
		private boolean attempt(Runnable action) {
			try {
				action.run();
				return true;
			}
			catch (RuntimeException ex) {
				failed(ex);
				return false;
			}
		}

		private void failed(RuntimeException ex) {
			if (this.layer.isDead()) {
				this.stopped = true;
			}
			else {
				this.failures.add(this.step + " failed with the power on: " + ex);
			}
		}

	}

	static byte[] key(int k) {
		return String.format("key-%03d", k).getBytes(StandardCharsets.UTF_8);
	}

	private static void join(CompletableFuture<Void> future) {
		try {
			future.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

}
