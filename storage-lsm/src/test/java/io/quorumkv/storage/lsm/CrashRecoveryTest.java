package io.quorumkv.storage.lsm;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.BitSet;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.Entry;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A child JVM writes and is killed with SIGKILL mid-run (while flushes and compactions
 * are under way); every write it acknowledged must be there after reopening. A process
 * crash loses nothing under any fsync policy: acknowledged records are in the page cache.
 */
class CrashRecoveryTest {

	private static final int ACKS_BEFORE_KILL = 20_000;

	@TempDir
	Path dir;

	static byte[] key(int i) {
		return String.format("crash-%08d", i).getBytes(StandardCharsets.UTF_8);
	}

	static byte[] value(int i) {
		return ("value-" + i + "-" + "x".repeat(i % 50)).getBytes(StandardCharsets.UTF_8);
	}

	@ParameterizedTest
	@EnumSource(value = FsyncPolicy.class, names = { "NEVER", "INTERVAL" })
	void everyAcknowledgedWriteSurvivesAKill(FsyncPolicy policy) throws Exception {
		String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		Process child = new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
				CrashWriter.class.getName(), this.dir.toString(), policy.name())
			.redirectError(ProcessBuilder.Redirect.DISCARD)
			.start();
		BitSet acked = new BitSet();
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
		try (BufferedReader lines = new BufferedReader(
				new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
			String line;
			while (acked.cardinality() < ACKS_BEFORE_KILL && System.nanoTime() < deadline
					&& (line = lines.readLine()) != null) {
				if (line.startsWith("ack ")) {
					acked.set(Integer.parseInt(line.substring(4)));
				}
			}
			// SIGKILL in the middle of writing (destroying also closes our end of the
			// pipe:
			// acks not read yet are simply not checked).
			child.destroyForcibly();
			assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
		}
		finally {
			child.destroyForcibly();
		}
		assertThat(acked.cardinality()).as("acknowledged writes before the kill").isGreaterThan(1_000);
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(this.dir))) {
			for (int i = acked.nextSetBit(0); i >= 0; i = acked.nextSetBit(i + 1)) {
				Entry read = storage.get(key(i)).block(Duration.ofSeconds(30));
				assertThat(read).as("acknowledged key %d", i).isEqualTo(Entry.value(key(i), value(i), 1L + i));
			}
		}
	}

}
