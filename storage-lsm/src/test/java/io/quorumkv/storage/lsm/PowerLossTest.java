package io.quorumkv.storage.lsm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

import io.quorumkv.storage.contract.Seeds;
import io.quorumkv.storage.lsm.io.BrokenIo;
import io.quorumkv.storage.lsm.io.FaultFileIo.Op;
import io.quorumkv.storage.lsm.io.FileIo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Crash everywhere ({@link PowerLossRun}): power losses at random operations of every
 * kind, with torn writes, for every fsync policy; every recovered state must be one the
 * policy accepts. {@code -Pstorage-long} runs ten times as many.
 */
@ExtendWith(Seeds.class)
class PowerLossTest {

	static final boolean LONG = Boolean.getBoolean("quorumkv.storage.long");

	private static final int CYCLES = 4;

	private static final int OPERATIONS = 250;

	@TempDir
	Path dir;

	@ParameterizedTest
	@EnumSource(FsyncPolicy.class)
	void everyPowerLossLeavesAStateThePolicyAccepts(FsyncPolicy policy, Seeds.Seed seed) {
		int runs = LONG ? 60 : 6;
		long operations = 0;
		long crashes = 0;
		long faults = 0;
		for (int run = 0; run < runs; run++) {
			PowerLossRun.Outcome outcome = new PowerLossRun(policy, seed.value() + run,
					this.dir.resolve(policy + "-" + run), UnaryOperator.identity())
				.run(CYCLES, OPERATIONS);
			assertThat(outcome.anomalies())
				.as("%s, run %d of %s, crashes %s", policy, run, Seeds.rerun(seed.value()), outcome.crashPoints())
				.isEmpty();
			operations += outcome.operations();
			crashes += outcome.crashes();
			faults += outcome.faults();
		}
		System.out.printf("[power-loss] %s: %d runs, %d operations, %d power losses, %d faults injected, 0 anomalies%n",
				policy, runs, operations, crashes, faults);
	}

	/**
	 * The manifest's every step (the temporary file's write and fsync, the rename, the
	 * folder's fsync), at each of the first flushes and compactions, under {@code ALWAYS}
	 * (every acknowledged write must survive).
	 */
	@Test
	void aPowerLossAtEveryManifestStepOfTheFirstFlushesAndCompactions(Seeds.Seed seed) {
		List<PowerLossRun.CrashPoint> steps = new ArrayList<>();
		for (int nth = 1; nth <= 6; nth++) {
			steps.add(PowerLossRun.CrashPoint.at("manifest write", Op.WRITE, "MANIFEST\\.tmp", nth));
			steps.add(PowerLossRun.CrashPoint.at("manifest fsync", Op.SYNC, "MANIFEST\\.tmp", nth));
			steps.add(PowerLossRun.CrashPoint.at("manifest rename", Op.RENAME, "MANIFEST", nth));
			steps.add(PowerLossRun.CrashPoint.at("folder sync", Op.SYNC_DIRECTORY, ".*", 2 * nth));
		}
		int run = 0;
		for (PowerLossRun.CrashPoint step : steps) {
			PowerLossRun.Outcome outcome = new PowerLossRun(FsyncPolicy.ALWAYS, seed.value() + run,
					this.dir.resolve("manifest-" + run++), UnaryOperator.identity(), List.of(step))
				.run(2, OPERATIONS);
			assertThat(outcome.anomalies())
				.as("%s, %s, crashes %s", step, Seeds.rerun(seed.value()), outcome.crashPoints())
				.isEmpty();
		}
	}

	/**
	 * The check catches an engine that acknowledges {@code ALWAYS} writes without forcing
	 * its WAL.
	 */
	@Test
	void theCheckCatchesAnEngineThatSkipsTheWalForce(Seeds.Seed seed) {
		assertThat(anomaliesOfABrokenEngine(FsyncPolicy.ALWAYS, BrokenIo.skipSyncOf("wal-.*"), seed.value()))
			.as(Seeds.rerun(seed.value()))
			.isPositive();
	}

	/**
	 * The check catches an engine whose manifest names a table before the table's data is
	 * forced.
	 */
	@Test
	void theCheckCatchesAManifestEditBeforeItsTableIsSynced(Seeds.Seed seed) {
		assertThat(anomaliesOfABrokenEngine(FsyncPolicy.NEVER, BrokenIo.skipSyncOf(".*\\.sst\\.tmp"), seed.value()))
			.as(Seeds.rerun(seed.value()))
			.isPositive();
	}

	private int anomaliesOfABrokenEngine(FsyncPolicy policy, UnaryOperator<FileIo> broken, long seed) {
		for (int run = 0; run < 10; run++) {
			PowerLossRun.Outcome outcome = new PowerLossRun(policy, seed + run, this.dir.resolve("broken-" + run),
					broken)
				.run(CYCLES, OPERATIONS);
			if (!outcome.anomalies().isEmpty()) {
				System.out.println("[power-loss] broken engine caught: " + outcome.anomalies().getFirst());
				return outcome.anomalies().size();
			}
		}
		return 0;
	}

}
