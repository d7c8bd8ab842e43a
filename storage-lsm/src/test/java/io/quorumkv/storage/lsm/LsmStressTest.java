package io.quorumkv.storage.lsm;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.quorumkv.storage.contract.Seeds;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A stress run as RocksDB's {@code db_stress}: a child JVM ({@link StressChild}) runs
 * eight threads of mixed operations with scans, flushes and compactions against a model
 * that checks every read, and is killed with SIGKILL at random moments, restarted on the
 * same folder and expected-state file, and checked in full on each start; a last child
 * only checks. Every policy in turn. About 45 s in {@code ./mvnw verify} (30 s of load,
 * lives of 3 to 7 s); {@code -Pstorage-long} runs {@code quorumkv.stress.minutes} (30 by
 * default) with more keys and longer lives between kills.
 */
@ExtendWith(Seeds.class)
class LsmStressTest {

	private static final boolean LONG = Boolean.getBoolean("quorumkv.storage.long");

	private static final int THREADS = 8;

	@TempDir
	Path dir;

	private final List<Process> children = new CopyOnWriteArrayList<>();

	/** No child outlives its test, whatever failed. */
	@AfterEach
	void killChildren() throws InterruptedException {
		for (Process child : this.children) {
			child.destroyForcibly();
			child.waitFor(30, TimeUnit.SECONDS);
		}
	}

	@Test
	void killedAgainAndAgainTheStoreKeepsEveryAcknowledgedWriteAndEveryReadIsRight(Seeds.Seed seed) throws Exception {
		Duration total = LONG ? Duration.ofMinutes(Long.getLong("quorumkv.stress.minutes", 30))
				: Duration.ofSeconds(30);
		int keys = LONG ? 20_000 : 4_000;
		Random random = new Random(seed.value());
		long deadline = System.nanoTime() + total.toNanos();
		long operations = 0;
		int kills = 0;
		List<String> anomalies = new CopyOnWriteArrayList<>();
		// Every policy is killed at least once, however slow the machine.
		int policies = FsyncPolicy.values().length;
		while ((System.nanoTime() < deadline || kills < policies) && anomalies.isEmpty()) {
			FsyncPolicy policy = FsyncPolicy.values()[kills % policies];
			Duration life = LONG ? Duration.ofSeconds(20 + random.nextInt(40))
					: Duration.ofMillis(3_000 + random.nextInt(4_000));
			// The child's own limit, should the kill not come: well past its life.
			int limit = (int) life.toSeconds() + 120;
			Child child = start(keys, random.nextLong(), limit, policy, "none", kills);
			operations += child.killAfter(life, anomalies);
			kills++;
		}
		Child check = start(keys, random.nextLong(), 0, FsyncPolicy.INTERVAL, "none", kills);
		assertThat(check.awaitExit(anomalies)).as("exit of the final check").isZero();
		System.out.printf("[stress] %s: %d operations, %d kills, %d anomalies, %d keys, %d threads%n", total,
				operations, kills, anomalies.size(), keys, THREADS);
		assertThat(anomalies).as(Seeds.rerun(seed.value())).isEmpty();
		assertThat(kills).isGreaterThan(2);
	}

	/** The restart check catches an engine that buffers its WAL in the process. */
	@Test
	void theCheckCatchesAnEngineThatBuffersItsWalInTheProcess(Seeds.Seed seed) throws Exception {
		List<String> anomalies = new CopyOnWriteArrayList<>();
		start(2_000, seed.value(), 120, FsyncPolicy.NEVER, "buffered-wal", 0).killAfter(Duration.ofSeconds(3),
				anomalies);
		assertThat(anomalies).as("anomalies before the kill").isEmpty();
		Child check = start(2_000, seed.value(), 0, FsyncPolicy.NEVER, "none", 1);
		assertThat(check.awaitExit(anomalies)).isEqualTo(3);
		assertThat(anomalies).as("acknowledged writes the buffering engine lost").isNotEmpty();
	}

	/** The read check catches an engine that acknowledges writes it does not apply. */
	@Test
	void theCheckCatchesAnEngineThatDropsAcknowledgedWrites(Seeds.Seed seed) throws Exception {
		List<String> anomalies = new CopyOnWriteArrayList<>();
		Child child = start(2_000, seed.value(), 20, FsyncPolicy.NEVER, "drops-writes", 0);
		assertThat(child.awaitExit(anomalies)).isEqualTo(3);
		// Seen by the owner's read, or by another thread's read after the
		// acknowledgement.
		assertThat(anomalies).isNotEmpty().allMatch((a) -> a.contains("expected") || a.contains("acknowledged before"));
	}

	private Child start(int keys, long seed, int seconds, FsyncPolicy policy, String defect, int run)
			throws IOException {
		String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		Path log = this.dir.resolve("child-" + run + ".log");
		// What a killed child leaves in its temporary folder (lz4's native library) goes
		// with the test's folder.
		Path tmp = Files.createDirectories(this.dir.resolve("tmp-" + run));
		Process process = new ProcessBuilder(java, "-Xmx256m", "-Djava.io.tmpdir=" + tmp, "-cp",
				System.getProperty("java.class.path"), StressChild.class.getName(), this.dir.resolve("data").toString(),
				this.dir.resolve("expected-state").toString(), Integer.toString(keys), Integer.toString(THREADS),
				Long.toString(seed), Integer.toString(seconds), policy.name(), defect)
			.redirectError(log.toFile())
			.start();
		this.children.add(process);
		return new Child(process, log);
	}

	/** A running child and what it reported. */
	private static final class Child {

		private final Process process;

		private final Path log;

		private final AtomicLong operations = new AtomicLong();

		private final Thread reader;

		Child(Process process, Path log) {
			this.process = process;
			this.log = log;
			this.reader = Thread.ofPlatform().daemon().unstarted(this::read);
		}

		private final List<String> reported = new CopyOnWriteArrayList<>();

		private volatile boolean verified;

		private void read() {
			try (BufferedReader lines = new BufferedReader(
					new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8))) {
				for (String line = lines.readLine(); line != null; line = lines.readLine()) {
					if (line.startsWith("ops ")) {
						this.operations.set(Long.parseLong(line.substring(4)));
					}
					else if (line.startsWith("verified ")) {
						this.verified = true;
					}
					else if (line.startsWith("anomaly ")) {
						this.reported.add(line.substring(8));
					}
				}
			}
			catch (IOException ex) {
				// Killed.
			}
		}

		/**
		 * Lets the child check the store, run for {@code life}, then kills it.
		 * @return the operations it reported
		 */
		long killAfter(Duration life, List<String> anomalies) throws Exception {
			this.reader.start();
			long verifyBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
			while (!this.verified && this.process.isAlive() && System.nanoTime() < verifyBy) {
				Thread.sleep(20);
			}
			if (this.verified) {
				Thread.sleep(life.toMillis());
			}
			this.process.destroyForcibly();
			assertThat(this.process.waitFor(30, TimeUnit.SECONDS)).as("child killed").isTrue();
			this.reader.join(10_000);
			collect(anomalies, "the child never checked the store");
			return this.operations.get();
		}

		/** Waits for a child that ends by itself (at most five minutes). */
		int awaitExit(List<String> anomalies) throws Exception {
			this.reader.start();
			if (!this.process.waitFor(5, TimeUnit.MINUTES)) {
				this.process.destroyForcibly();
			}
			this.reader.join(10_000);
			collect(anomalies, "the child never checked the store");
			return this.process.exitValue();
		}

		private void collect(List<String> anomalies, String unverified) throws IOException {
			anomalies.addAll(this.reported);
			if (!this.verified) {
				anomalies.add(unverified + ": " + Files.readString(this.log));
			}
		}

	}

}
