package io.quorumkv.storage.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a backend keeps when its process is killed with SIGKILL in the middle of writing.
 * A child JVM ({@link CrashWriter}) writes and reports each acknowledged upsert; the test
 * kills it, reopens the folder here and reads every acknowledged key back
 * ({@link CrashLedger}): a key holding nothing, or a version older than the newest one
 * acknowledged, is a lost write. {@link Outcome} bounds how many were lost; the bound is
 * zero for every backend's default settings.
 *
 * <pre>{@code
 * class H2CrashTest extends StorageCrashTest {
 *     &#64;Test
 *     void theDefaultLosesNothing() throws Exception {
 *         crashRepeatedly(H2Opener.class, "DEFAULT", 4).assertNothingLost();
 *     }
 * }
 * }</pre>
 *
 * Two workloads: {@link #crash} inserts new keys and kills once; {@link #crashRepeatedly}
 * overwrites and deletes a few hundred keys (single upserts and {@code upsertAll}
 * batches) and kills the writer several times on the same folder, checking after each
 * kill. Only the process dies: the operating system keeps every page written before. What
 * a power loss would take is not tested here.
 */
public abstract class StorageCrashTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	/**
	 * Timestamps of run {@code r} of {@link #crashRepeatedly} start at the test's start
	 * (microseconds since the epoch, as the service's clock) plus {@code r} times this
	 * (about 2.8 hours, far more timestamps than a run uses); the insert workload's are
	 * below it.
	 *
	 * <p>
	 * Why the present: the mixed workload's deletes must not be older than a backend's
	 * tombstone grace period. A backend may purge an older tombstone (the LSM's
	 * compactions do once nothing older is left), and the key then reads as absent, which
	 * the ledger cannot tell from a lost write: not even by the newest acknowledged
	 * version, since a key whose newest acknowledged version is a value may hold a newer
	 * delete the writer sent, its acknowledgement not read before the kill.
	 */
	private static final long RUN_SPAN = 10_000_000_000L;

	@TempDir
	protected Path dir;

	/**
	 * The children's {@code java.io.tmpdir}: what a killed child leaves there (a native
	 * library a compressor unpacked) is deleted with the test's folders.
	 */
	@TempDir
	Path childTmp;

	/** How many acknowledged writes to wait for before each kill. */
	protected int acknowledgementsBeforeKill() {
		return 5_000;
	}

	/** Keys the mixed workload overwrites and deletes. */
	protected int mixedKeys() {
		return 400;
	}

	static byte[] key(int i) {
		return String.format("crash-%08d", i).getBytes(StandardCharsets.UTF_8);
	}

	/** The insert workload's entry of key {@code i}. */
	static Entry entry(int i) {
		return Entry.value(key(i), ("value-" + i + "-" + "x".repeat(i % 50)).getBytes(StandardCharsets.UTF_8), 1L + i);
	}

	/**
	 * The mixed workload's version of key {@code k} at {@code ts}: a fifth are deletes.
	 */
	static Entry version(int k, long ts) {
		return (ts % 5 == 0) ? Entry.tombstone(key(k), ts) : Entry.value(key(k),
				("value-" + k + "-" + ts + "-" + "x".repeat((int) (ts % 50))).getBytes(StandardCharsets.UTF_8), ts);
	}

	/** The key the mixed workload writes at {@code ts}. */
	static int keyOf(long ts, int keys) {
		return (int) Math.floorMod((ts * 0x9E3779B97F4A7C15L) >>> 20, (long) keys);
	}

	/** The only version of key {@code k} with timestamp {@code ts} a writer sends. */
	static Entry expected(int k, long ts) {
		return (ts < RUN_SPAN) ? entry(k) : version(k, ts);
	}

	/**
	 * Inserts new keys with a writer of {@code opener} in {@code mode}, kills it once.
	 */
	protected Outcome crash(Class<? extends StorageOpener> opener, String mode) throws Exception {
		CrashLedger ledger = new CrashLedger();
		run(opener, mode, "inserts", 0, Duration.ZERO, ledger);
		return report(opener, mode, ledger);
	}

	/**
	 * Overwrites and deletes keys with a writer of {@code opener} in {@code mode}, killed
	 * {@code kills} times on the same folder; every acknowledged write is checked after
	 * each kill.
	 */
	protected Outcome crashRepeatedly(Class<? extends StorageOpener> opener, String mode, int kills) throws Exception {
		return crashRepeatedly(opener, mode, kills, Duration.ZERO);
	}

	/**
	 * As {@link #crashRepeatedly(Class, String, int)}, each writer killed no sooner than
	 * {@code span} after its first acknowledgement: for settings that may lose a window
	 * of writes ({@link Outcome#assertLostOnlyWithin}), a span well past the window
	 * leaves writes older than it to lose.
	 */
	protected Outcome crashRepeatedly(Class<? extends StorageOpener> opener, String mode, int kills, Duration span)
			throws Exception {
		CrashLedger ledger = new CrashLedger();
		long start = System.currentTimeMillis() * 1000;
		for (int run = 1; run <= kills; run++) {
			run(opener, mode, "mixed", start + run * RUN_SPAN, span, ledger);
		}
		return report(opener, mode, ledger);
	}

	private Outcome report(Class<? extends StorageOpener> opener, String mode, CrashLedger ledger) {
		Outcome outcome = new Outcome(mode, ledger);
		System.out.println("[crash] " + opener.getSimpleName() + " " + outcome.summary());
		return outcome;
	}

	/** One child run: start, read acknowledgements, kill, reopen here and check. */
	private void run(Class<? extends StorageOpener> opener, String mode, String workload, long base, Duration span,
			CrashLedger ledger) throws Exception {
		String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		Process child = new ProcessBuilder(java, "-Xmx512m", "-Djava.io.tmpdir=" + this.childTmp, "-cp",
				System.getProperty("java.class.path"), CrashWriter.class.getName(), opener.getName(),
				this.dir.toString(), mode, workload, Long.toString(base), Integer.toString(mixedKeys()))
			.redirectError(ProcessBuilder.Redirect.DISCARD)
			.start();
		int before = ledger.acknowledged();
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
		try (BufferedReader lines = new BufferedReader(
				new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
			String line;
			while ((ledger.acknowledged() - before < acknowledgementsBeforeKill()
					|| !ledger.runSpans(span.toMillis(), System.currentTimeMillis())) && System.nanoTime() < deadline
					&& (line = lines.readLine()) != null) {
				if (line.startsWith("ack ")) {
					String[] parts = line.split(" ");
					ledger.acked(new CrashLedger.Ack(Integer.parseInt(parts[1]), Long.parseLong(parts[2]),
							Long.parseLong(parts[3]), ledger.kills()));
				}
			}
			// SIGKILL in the middle of writing (acknowledgements not read yet are not
			// checked).
			ledger.killed(System.currentTimeMillis());
			child.destroyForcibly();
			assertThat(child.waitFor(30, TimeUnit.SECONDS)).as("child killed").isTrue();
		}
		finally {
			child.destroyForcibly();
		}
		assertThat(ledger.acknowledged() - before).as("acknowledged writes before kill %d", ledger.kills())
			.isGreaterThan(100);
		StorageOpener reader = opener.getConstructor().newInstance();
		try (Storage storage = reader.open(this.dir, mode)) {
			ledger.check(storage, TIMEOUT);
		}
	}

	/** What survived the kills. */
	public static final class Outcome {

		private final String mode;

		private final CrashLedger ledger;

		Outcome(String mode, CrashLedger ledger) {
			this.mode = mode;
			this.ledger = ledger;
		}

		public int acknowledged() {
			return this.ledger.acknowledged();
		}

		public int lost() {
			return this.ledger.lost().size();
		}

		public String summary() {
			List<CrashLedger.Ack> lost = this.ledger.lost();
			long oldest = lost.stream().mapToLong(this.ledger::lossAge).max().orElse(0);
			return this.mode + ": " + this.ledger.kills() + " kill(s), " + acknowledged() + " acknowledged, "
					+ lost.size() + " lost (oldest lost acknowledged " + oldest + " ms before its kill)";
		}

		/** No acknowledged write lost: the bound of every backend's default. */
		public void assertNothingLost() {
			assertLostAtMost(0);
		}

		/** At most {@code max} acknowledged writes lost. */
		public void assertLostAtMost(int max) {
			assertThat(lost()).as(summary()).isLessThanOrEqualTo(max);
		}

		/**
		 * For settings that may lose a window of writes: every write acknowledged more
		 * than {@code window} before its kill is kept (or overwritten by a newer one).
		 * Every run must have acknowledged writes before that window (run it with
		 * {@link #crashRepeatedly(Class, String, int, Duration)} and a span past the
		 * window): in a run shorter than the window, a backend that loses all it
		 * acknowledged would pass.
		 *
		 * <p>
		 * No count bound beside it: "at most the writes acknowledged within the window"
		 * follows from the age bound, so it could never fail first.
		 */
		public void assertLostOnlyWithin(Duration window) {
			for (int run = 0; run < this.ledger.kills(); run++) {
				long within = this.ledger.acknowledgedWithin(window, run);
				assertThat(this.ledger.acknowledgedInRun(run) - within)
					.as("writes acknowledged more than %s before kill %d (%d within it), or the bound proves nothing: %s",
							window, run + 1, within, summary())
					.isPositive();
			}
			for (CrashLedger.Ack ack : this.ledger.lost()) {
				assertThat(this.ledger.lossAge(ack))
					.as("age of the oldest lost write of key %d: %s", ack.key(), summary())
					.isLessThanOrEqualTo(window.toMillis());
			}
		}

	}

}
