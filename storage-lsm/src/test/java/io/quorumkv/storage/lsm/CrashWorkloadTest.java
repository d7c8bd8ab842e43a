package io.quorumkv.storage.lsm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Random;

import io.quorumkv.storage.contract.Seeds;
import io.quorumkv.storage.lsm.io.FaultFileIo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The crash workload's own check: an operation that fails on a live engine with the power
 * on (here a read of a table whose bits were flipped as it was read) is an anomaly, not
 * the quiet end of a cycle that a power loss is.
 */
@ExtendWith(Seeds.class)
class CrashWorkloadTest {

	@TempDir
	Path root;

	@Test
	void anOperationThatFailsOnALiveEngineIsAnAnomaly(Seeds.Seed seed) {
		Path dir = this.root.resolve("store");
		CrashModel model = new CrashModel();
		Random random = new Random(seed.value());
		try (LsmStorage storage = LsmStorage.open(PowerLossRun.options(dir, FsyncPolicy.ALWAYS))) {
			CrashWorkload writer = new CrashWorkload(storage, model, random, FsyncPolicy.ALWAYS, PowerLossRun.WINDOW);
			writer.run(400, () -> false);
			assertThat(writer.anomalies()).as(Seeds.rerun(seed.value())).isEmpty();
		}
		int refused = 0;
		for (int trial = 0; trial < 40 && refused == 0; trial++) {
			FaultFileIo io = new FaultFileIo(dir, seed.value() + trial).flipReads(0.2);
			LsmStorage storage;
			try {
				storage = LsmStorage.open(PowerLossRun.options(dir, FsyncPolicy.ALWAYS), io);
			}
			catch (io.quorumkv.storage.CorruptedStorageException ex) {
				continue;
			}
			try (storage) {
				CrashWorkload reader = new CrashWorkload(storage, model, new Random(seed.value() + trial),
						FsyncPolicy.ALWAYS, PowerLossRun.WINDOW);
				reader.run(400, io::isDead);
				if (!reader.anomalies().isEmpty()) {
					assertThat(reader.anomalies()).as(Seeds.rerun(seed.value()))
						.allMatch((anomaly) -> anomaly.contains("failed on a live engine with the power on"));
					refused++;
				}
			}
		}
		assertThat(refused).as("a run whose reads met a flipped bit, %s", Seeds.rerun(seed.value())).isPositive();
	}

}
