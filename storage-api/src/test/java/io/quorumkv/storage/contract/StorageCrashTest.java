package io.quorumkv.storage.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a backend keeps when its process is killed with SIGKILL in the middle of writing.
 * A child JVM ({@link CrashWriter}) writes and reports each acknowledged upsert; the test
 * kills it, reopens the folder here and checks the acknowledged writes:
 *
 * <pre>{@code
 * class H2CrashTest extends StorageCrashTest {
 *     &#64;Test
 *     void writeEachCommitLosesNothing() throws Exception {
 *         crash(H2Opener.class, "WRITE_EACH_COMMIT").assertNothingLost();
 *     }
 * }
 * }</pre>
 *
 * Only the process dies: the operating system keeps every page written before. What a
 * power loss would take is not tested here.
 */
public abstract class StorageCrashTest {

	@TempDir
	protected Path dir;

	/** How many acknowledged writes to wait for before the kill. */
	protected int acknowledgementsBeforeKill() {
		return 5_000;
	}

	static byte[] key(int i) {
		return String.format("crash-%08d", i).getBytes(StandardCharsets.UTF_8);
	}

	static Entry entry(int i) {
		return Entry.value(key(i), ("value-" + i + "-" + "x".repeat(i % 50)).getBytes(StandardCharsets.UTF_8), 1L + i);
	}

	/** Runs a writer of {@code opener} in {@code mode}, kills it, and reads back. */
	protected Outcome crash(Class<? extends StorageOpener> opener, String mode) throws Exception {
		String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		Process child = new ProcessBuilder(java, "-Xmx512m", "-cp", System.getProperty("java.class.path"),
				CrashWriter.class.getName(), opener.getName(), this.dir.toString(), mode)
			.redirectError(ProcessBuilder.Redirect.DISCARD)
			.start();
		Map<Integer, Long> acknowledged = new TreeMap<>();
		long killedAt;
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
		try (BufferedReader lines = new BufferedReader(
				new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
			String line;
			while (acknowledged.size() < acknowledgementsBeforeKill() && System.nanoTime() < deadline
					&& (line = lines.readLine()) != null) {
				if (line.startsWith("ack ")) {
					String[] parts = line.split(" ");
					acknowledged.put(Integer.valueOf(parts[1]), Long.valueOf(parts[2]));
				}
			}
			killedAt = System.currentTimeMillis();
			child.destroyForcibly();
			assertThat(child.waitFor(30, TimeUnit.SECONDS)).as("child killed").isTrue();
		}
		finally {
			child.destroyForcibly();
		}
		assertThat(acknowledged).as("acknowledged writes before the kill").hasSizeGreaterThan(100);
		StorageOpener reader = opener.getConstructor().newInstance();
		List<Integer> lost = new ArrayList<>();
		try (Storage storage = reader.open(this.dir, mode)) {
			for (int i : acknowledged.keySet()) {
				Entry read = storage.get(key(i)).block(Duration.ofSeconds(30));
				if (read == null) {
					lost.add(i);
				}
				else {
					assertThat(read).as("acknowledged key %d", i).isEqualTo(entry(i));
				}
			}
		}
		Outcome outcome = new Outcome(mode, acknowledged, lost, killedAt);
		System.out.println("[crash] " + opener.getSimpleName() + " " + outcome.summary());
		return outcome;
	}

	/**
	 * What survived.
	 *
	 * @param mode the setting under test
	 * @param acknowledged key number to the time its upsert was acknowledged
	 * @param lost acknowledged keys missing after reopening
	 * @param killedAt when the child was killed
	 */
	public record Outcome(String mode, Map<Integer, Long> acknowledged, List<Integer> lost, long killedAt) {

		public String summary() {
			long oldestLostAge = this.lost.stream()
				.mapToLong((i) -> this.killedAt - this.acknowledged.get(i))
				.max()
				.orElse(0);
			return this.mode + ": " + this.acknowledged.size() + " acknowledged, " + this.lost.size()
					+ " lost (oldest lost acknowledged " + oldestLostAge + " ms before the kill)";
		}

		public void assertNothingLost() {
			assertThat(this.lost).as(summary()).isEmpty();
		}

		/** Only writes acknowledged within {@code window} before the kill may be lost. */
		public void assertLostOnlyWithin(Duration window) {
			for (int i : this.lost) {
				assertThat(this.killedAt - this.acknowledged.get(i)).as("age of lost key %d: %s", i, summary())
					.isLessThanOrEqualTo(window.toMillis());
			}
		}

	}

}
