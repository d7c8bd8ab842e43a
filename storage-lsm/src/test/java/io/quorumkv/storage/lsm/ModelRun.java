package io.quorumkv.storage.lsm;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Keys;
import io.quorumkv.storage.lsm.ModelOps.Op;
import io.quorumkv.storage.lsm.io.FaultFileIo;
import io.quorumkv.storage.lsm.io.FaultFileIo.Tear;
import io.quorumkv.storage.lsm.io.FileIo;

/**
 * Runs {@link ModelOps} against a store over the fault-injecting file layer and against
 * {@link PossibleStates}, collecting every read the model does not accept. Crashes
 * recover from the crash image: a kill keeps every acknowledged write, a power loss those
 * the fsync policy made durable ({@code ALWAYS}: all; otherwise those before the last
 * {@code flush()}, memtable flush or reopen).
 */
final class ModelRun implements AutoCloseable {

	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	private final Path root;

	private final FsyncPolicy policy;

	private final boolean purges;

	private final UnaryOperator<FileIo> engineIo;

	private final PossibleStates model;

	private final List<String> anomalies = new ArrayList<>();

	private FaultFileIo io;

	private LsmStorage storage;

	private int images;

	/**
	 * @param purges whether tombstones are purged (a grace of zero) or kept (a grace of a
	 * thousand years); timestamps are tiny, so every tombstone is past a zero grace
	 * @param engineIo wraps the file layer the engine gets (a broken engine, to show the
	 * model catches it)
	 * @param modelPurges whether the model expects purged tombstones
	 */
	ModelRun(Path root, FsyncPolicy policy, boolean purges, UnaryOperator<FileIo> engineIo, boolean modelPurges) {
		this.root = root;
		this.policy = policy;
		this.purges = purges;
		this.engineIo = engineIo;
		this.model = new PossibleStates(modelPurges);
		open(root.resolve("image-0"));
	}

	static LsmOptions options(Path dir, FsyncPolicy policy, boolean purges) {
		return LsmOptions.defaults(dir)
			.withMemtableSize(4096)
			.withBlockSize(256)
			.withCompaction(2, 8 << 10, 2, 4096)
			.withMaxLevels(4)
			.withFsync(policy)
			.withTombstoneGracePeriod(purges ? Duration.ZERO : Duration.ofDays(365L * 1000));
	}

	private void open(Path dir) {
		this.io = new FaultFileIo(dir, this.images);
		this.storage = LsmStorage.open(options(dir, this.policy, this.purges), this.engineIo.apply(this.io));
	}

	List<String> anomalies() {
		return this.anomalies;
	}

	/** Runs {@code ops}, then a full scan; stops at the first anomaly. */
	List<String> run(List<Op> ops) throws Exception {
		for (Op op : ops) {
			apply(op);
			if (!this.anomalies.isEmpty()) {
				this.anomalies.add(0, "at " + op);
				return this.anomalies;
			}
		}
		check(new ModelOps.Scan(0, null));
		if (!this.storage.stats().healthy()) {
			this.anomalies.add("unhealthy: " + this.storage.stats().failure());
		}
		return this.anomalies;
	}

	void apply(Op op) throws Exception {
		switch (op) {
			case ModelOps.Put p -> write(Entry.value(ModelOps.key(p.key()), p.value(), p.timestamp()));
			case ModelOps.Delete d -> write(Entry.tombstone(ModelOps.key(d.key()), d.timestamp()));
			case ModelOps.Get g -> {
				String anomaly = this.model.read(ModelOps.key(g.key()),
						this.storage.get(ModelOps.key(g.key())).block(TIMEOUT));
				if (anomaly != null) {
					this.anomalies.add(anomaly);
				}
			}
			case ModelOps.Scan s -> check(s);
			case ModelOps.Flush f -> {
				this.storage.flush().block(TIMEOUT);
				this.model.durable();
			}
			case ModelOps.ForceFlush f -> {
				this.storage.forceFlush().get(60, TimeUnit.SECONDS);
				this.model.durable();
			}
			case ModelOps.Compact c -> this.storage.forceCompaction().get(60, TimeUnit.SECONDS);
			case ModelOps.Reopen r -> {
				this.storage.close();
				open(this.io.dir());
				this.model.durable();
			}
			case ModelOps.Kill k -> crash(Tear.KEEP_WRITTEN);
			case ModelOps.PowerLoss p -> crash(p.tear());
		}
	}

	private void write(Entry e) {
		this.storage.upsert(e).block(TIMEOUT);
		this.model.upsert(e);
	}

	private void check(ModelOps.Scan s) {
		byte[] from = ModelOps.key(s.from());
		byte[] to = (s.to() != null) ? ModelOps.key(s.to()) : null;
		if (s.from() == 0 && s.to() == null) {
			from = new byte[] { 0 };
		}
		Map<byte[], Entry> found = new TreeMap<>(Keys.ORDER);
		this.storage.scan(from, to).collectList().block(TIMEOUT).forEach((e) -> found.put(e.key(), e));
		this.anomalies.addAll(this.model.scan(from, to, found));
	}

	private void crash(Tear tear) {
		Path image = this.io.powerLoss(tear, this.root.resolve("image-" + (++this.images))).folder();
		this.storage.close();
		boolean all = tear == Tear.KEEP_WRITTEN || this.policy == FsyncPolicy.ALWAYS;
		this.model.crashed((w) -> all);
		open(image);
	}

	@Override
	public void close() {
		this.storage.close();
	}

}
