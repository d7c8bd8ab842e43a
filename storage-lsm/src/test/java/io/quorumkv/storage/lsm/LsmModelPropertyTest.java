package io.quorumkv.storage.lsm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.function.UnaryOperator;

import io.quorumkv.storage.lsm.ModelOps.Op;
import io.quorumkv.storage.lsm.io.BrokenIo;
import io.quorumkv.storage.lsm.io.FaultFileIo.Tear;
import io.quorumkv.storage.lsm.io.FileIo;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;

/**
 * Random sequences of operations against the engine and the reference model
 * ({@link PossibleStates}) must agree: reads, scans, flushes, compactions (a 4 KiB
 * memtable, tiny tables and levels make them happen every few steps), clean reopens,
 * process kills and power losses with torn writes, under {@code ALWAYS} and
 * {@code NEVER}, with tombstone purge on or off. The number of tries is
 * {@code jqwik.tries.default}: 60 in {@code ./mvnw verify}, 3,000 under
 * {@code -Pstorage-long}.
 */
class LsmModelPropertyTest {

	@Provide
	Arbitrary<List<Op>> operations() {
		return ModelOps.operations(ModelOps.KEYS, true, 30, 250);
	}

	@Provide
	Arbitrary<FsyncPolicy> policies() {
		return Arbitraries.of(FsyncPolicy.ALWAYS, FsyncPolicy.NEVER);
	}

	@Property(shrinking = ShrinkingMode.BOUNDED)
	void behavesLikeTheModel(@ForAll("operations") List<Op> ops, @ForAll("policies") FsyncPolicy policy,
			@ForAll boolean purge) throws Exception {
		Path dir = TestDirs.create("lsm-model");
		try (ModelRun run = new ModelRun(dir, policy, purge, UnaryOperator.identity(), purge)) {
			assertThat(run.run(ops)).isEmpty();
		}
		finally {
			TestDirs.delete(dir);
		}
	}

	/** The model catches an engine that skips the WAL force under {@code ALWAYS}. */
	@Example
	void theModelCatchesAnEngineThatSkipsTheWalForce() throws Exception {
		List<Op> ops = List.of(new ModelOps.Put(1, new byte[] { 1 }, 5), new ModelOps.Delete(2, 6),
				new ModelOps.PowerLoss(Tear.DROP_UNSYNCED), new ModelOps.Get(1), new ModelOps.Get(2));
		assertThat(anomalies(ops, FsyncPolicy.ALWAYS, false, BrokenIo.skipSyncOf("wal-.*"), false)).isNotEmpty();
		assertThat(anomalies(ops, FsyncPolicy.ALWAYS, false, UnaryOperator.identity(), false)).isEmpty();
	}

	/**
	 * The model tells a kept tombstone from a purged one: an engine that purges where the
	 * model expects none (a grace period ignored) is caught, and the same sequence passes
	 * when the model allows the purge.
	 */
	@Example
	void theModelCatchesATombstonePurgedBeforeItsGrace() throws Exception {
		List<Op> ops = List.of(new ModelOps.Put(3, new byte[] { 1 }, 5), new ModelOps.ForceFlush(),
				new ModelOps.Delete(3, 6), new ModelOps.ForceFlush(), new ModelOps.Compact(), new ModelOps.Get(3),
				new ModelOps.Put(3, new byte[] { 2 }, 4), new ModelOps.Get(3));
		assertThat(anomalies(ops, FsyncPolicy.NEVER, true, UnaryOperator.identity(), false)).isNotEmpty();
		assertThat(anomalies(ops, FsyncPolicy.NEVER, true, UnaryOperator.identity(), true)).isEmpty();
	}

	private static List<String> anomalies(List<Op> ops, FsyncPolicy policy, boolean purges,
			UnaryOperator<FileIo> engine, boolean modelPurges) throws Exception {
		Path dir = TestDirs.create("lsm-model-broken");
		try (ModelRun run = new ModelRun(dir, policy, purges, engine, modelPurges)) {
			return run.run(ops);
		}
		finally {
			TestDirs.delete(dir);
		}
	}

}
