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
 * Every crash point of one fixed workload ({@link CrashPointSweep}), per fsync policy: at
 * each file operation in turn, a power loss that drops the unsynced bytes, one that tears
 * them at a random byte, or a process kill that keeps every written byte, one after the
 * other from a tear the printed seed picks; every recovered state must be one the policy
 * accepts. The torn bytes and the name changes a power loss keeps are drawn from the
 * seed. {@code -Dquorumkv.storage.long=true} (the {@code storage-long} profile) cuts
 * every operation with every tear, adds torn writes followed by zeros and three more
 * seeds for each torn crash point.
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
		long runs = sweep(sweep, points, tears, LONG ? 4 : 1, !LONG, seed.value(), anomalies);
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
		sweep(sweep, sweep.count(), List.of(Tear.DROP_UNSYNCED), 1, false, seed.value(), anomalies);
		assertThat(anomalies).as("%s, %s", policy, Seeds.rerun(seed.value())).isNotEmpty();
		System.out.println("[crash-points] broken engine caught: " + anomalies.getFirst());
	}

	/**
	 * Crashes at every operation {@code 1..points}, until 20 anomalies; returns the
	 * crashes run. With {@code rotate}, each operation is cut by one of {@code tears} in
	 * turn, starting from one the seed picks (so every operation is crashed, and every
	 * pair of operation and tear comes up over runs); otherwise by each of them. The torn
	 * ones are drawn from {@code draws} seeds.
	 */
	private static long sweep(CrashPointSweep sweep, long points, List<Tear> tears, int draws, boolean rotate,
			long seed, List<String> anomalies) {
		long runs = 0;
		int first = (int) Math.floorMod(seed, (long) tears.size());
		for (long k = 1; k <= points && anomalies.size() < 20; k++) {
			List<Tear> cuts = rotate ? List.of(tears.get((int) ((first + k) % tears.size()))) : tears;
			for (Tear tear : cuts) {
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
