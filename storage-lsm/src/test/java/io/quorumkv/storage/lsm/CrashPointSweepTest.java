package io.quorumkv.storage.lsm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.quorumkv.storage.contract.Seeds;
import io.quorumkv.storage.lsm.io.BrokenIo;
import io.quorumkv.storage.lsm.io.FaultFileIo.Tear;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every crash point of one fixed workload ({@link CrashPointSweep}), per fsync policy: a
 * power loss that drops the unsynced bytes, one that tears them at a random byte, and a
 * process kill that keeps every written byte, at each file operation in turn; every
 * recovered state must be one the policy accepts. The torn bytes and the name changes a
 * power loss keeps are drawn from the printed seed. {@code -Dquorumkv.storage.long=true}
 * adds torn writes followed by zeros and three more seeds for each torn crash point.
 */
@ExtendWith(Seeds.class)
class CrashPointSweepTest {

	static final boolean LONG = Boolean.getBoolean("quorumkv.storage.long");

	@TempDir
	Path dir;

	@ParameterizedTest
	@EnumSource(FsyncPolicy.class)
	void everyCrashPointOfTheWorkloadRecoversToAStateThePolicyAccepts(FsyncPolicy policy, Seeds.Seed seed) {
		long start = System.nanoTime();
		CrashPointSweep sweep = new CrashPointSweep(policy, this.dir.resolve(policy.name()));
		long points = sweep.count();
		List<Tear> tears = LONG ? List.of(Tear.values())
				: List.of(Tear.DROP_UNSYNCED, Tear.TORN_PREFIX, Tear.KEEP_WRITTEN);
		List<String> anomalies = new ArrayList<>();
		long runs = sweep(sweep, points, tears, LONG ? 4 : 1, seed.value(), anomalies);
		long millis = (System.nanoTime() - start) / 1_000_000;
		assertThat(anomalies).as("%s, %s", policy, Seeds.rerun(seed.value())).isEmpty();
		System.out.printf(
				"[crash-points] %s: %d crash points, %d crashes recovered and checked %s, 0 anomalies, %d ms%n", policy,
				points, runs, tears, millis);
	}

	/**
	 * The sweep catches an engine whose manifest names a table before the table's data is
	 * forced: a power loss at the right operation of a flush loses what the flush retired
	 * from the WAL. Found within the first forced flush, by trying every operation of it
	 * rather than by luck.
	 */
	@ParameterizedTest
	@EnumSource(FsyncPolicy.class)
	void theSweepCatchesAManifestEditBeforeItsTableIsSynced(FsyncPolicy policy, Seeds.Seed seed) {
		CrashPointSweep sweep = new CrashPointSweep(policy, this.dir.resolve("broken-" + policy),
				BrokenIo.skipSyncOf(".*\\.sst\\.tmp"));
		List<String> anomalies = new ArrayList<>();
		sweep(sweep, sweep.count(), List.of(Tear.DROP_UNSYNCED), 1, seed.value(), anomalies);
		assertThat(anomalies).as("%s, %s", policy, Seeds.rerun(seed.value())).isNotEmpty();
		System.out.println("[crash-points] broken engine caught: " + anomalies.getFirst());
	}

	/**
	 * Crashes at every operation {@code 1..points} with each tear ({@code draws} seeds
	 * for the torn ones), until 20 anomalies; returns the crashes run.
	 */
	private static long sweep(CrashPointSweep sweep, long points, List<Tear> tears, int draws, long seed,
			List<String> anomalies) {
		long runs = 0;
		for (long k = 1; k <= points && anomalies.size() < 20; k++) {
			for (Tear tear : tears) {
				int tries = (tear == Tear.DROP_UNSYNCED || tear == Tear.KEEP_WRITTEN) ? 1 : draws;
				for (int draw = 0; draw < tries; draw++) {
					anomalies.addAll(sweep.crashAt(k, tear, seed + k * 31 + draw));
					runs++;
				}
			}
		}
		return runs;
	}

}
