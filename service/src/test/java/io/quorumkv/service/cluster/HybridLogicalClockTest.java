package io.quorumkv.service.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import io.quorumkv.storage.CorruptedStorageException;
import io.quorumkv.storage.StorageException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The clock with an injected wall clock (microseconds): no sleeps, no real time. */
class HybridLogicalClockTest {

	private static final long HOUR = 3_600_000_000L;

	private static final Duration SKEW = Duration.ofMillis(500);

	@TempDir
	Path dir;

	final AtomicLong wall = new AtomicLong(1_800_000_000_000_000L);

	/** The mark of the clock opened last. */
	HighWaterMark mark;

	private HybridLogicalClock open(Duration step) throws IOException {
		HighWaterMark mark = HighWaterMark.open(this.dir.resolve("clock"), step);
		this.mark = mark;
		HybridLogicalClock clock = new HybridLogicalClock(this.wall::get, SKEW, mark);
		mark.reserve(Math.max(clock.last(), this.wall.get()));
		return clock;
	}

	private long markOnDisk() throws IOException {
		return HighWaterMark.open(this.dir.resolve("clock"), Duration.ofSeconds(1)).recovered();
	}

	@Test
	void stampsFollowTheWallClockAndNeverRepeat() throws IOException {
		try (HybridLogicalClock clock = open(Duration.ofSeconds(1))) {
			long first = clock.now();
			assertThat(first).isEqualTo(this.wall.get());
			assertThat(clock.now()).isEqualTo(first + 1);
			this.wall.addAndGet(10_000);
			assertThat(clock.now()).isEqualTo(this.wall.get());
			this.wall.addAndGet(-5_000_000);
			long afterStepBack = clock.now();
			assertThat(afterStepBack).isGreaterThan(first + 10_000);
		}
	}

	@Test
	void observeAdoptsTimestampsWithinTheSkewAndRefusesFurtherOnes() throws IOException {
		try (HybridLogicalClock clock = open(Duration.ofSeconds(1))) {
			long within = this.wall.get() + 400_000;
			assertThat(clock.observe(within)).isTrue();
			assertThat(clock.now()).isEqualTo(within + 1);
			long hourAhead = this.wall.get() + HOUR;
			assertThat(clock.admissible(hourAhead)).isFalse();
			assertThat(clock.observe(hourAhead)).isFalse();
			assertThat(clock.now()).as("a refused timestamp moves nothing").isEqualTo(within + 2);
			assertThat(clock.observe(this.wall.get() + 500_001)).isFalse();
			assertThat(clock.observe(this.wall.get() + 500_000)).isTrue();
			assertThat(clock.observe(Long.MIN_VALUE)).isTrue();
		}
	}

	@Test
	void theMarkIsWrittenAboutOncePerStepOfProgress() throws IOException {
		HybridLogicalClock clock = open(Duration.ofSeconds(1));
		long initial = clock.markWrites();
		// 20 seconds of stamps, one per millisecond.
		for (int i = 0; i < 20_000; i++) {
			this.wall.addAndGet(1_000);
			long stamp = clock.now();
			if (i % 1_000 == 0) {
				assertThat(markOnDisk()).as("the mark covers every stamp handed out").isGreaterThanOrEqualTo(stamp);
			}
		}
		clock.close();
		long writes = clock.markWrites() - initial;
		assertThat(writes).as("writes for 20 s of stamps").isBetween(10L, 45L);
	}

	@Test
	void aRestartWithTheWallClockSetBackAnHourNeverStampsBelowEarlierStamps() throws IOException {
		long last = 0;
		try (HybridLogicalClock clock = open(Duration.ofSeconds(1))) {
			for (int i = 0; i < 1_000; i++) {
				this.wall.addAndGet(1_000);
				last = clock.now();
			}
		}
		this.wall.addAndGet(-HOUR);
		try (HybridLogicalClock restarted = open(Duration.ofSeconds(1))) {
			long first = restarted.now();
			assertThat(first).isGreaterThan(last);
			assertThat(first - last).as("a graceful close resumes right above the last stamp").isLessThan(10);
			assertThat(restarted.now()).isGreaterThan(first);
		}
	}

	@Test
	void aCrashWithoutCloseStillNeverStampsBelowEarlierStamps() throws IOException {
		HybridLogicalClock crashed = open(Duration.ofMillis(50));
		long last = 0;
		for (int i = 0; i < 5_000; i++) {
			this.wall.addAndGet(100);
			last = crashed.now();
		}
		// A crash: the renewal thread stops, the exact last stamp is never written; the
		// file holds the reservation, at most a step and a half above the last stamp.
		this.mark.close();
		assertThat(markOnDisk()).isGreaterThanOrEqualTo(last).isLessThanOrEqualTo(last + 75_000);
		this.wall.addAndGet(-HOUR);
		try (HybridLogicalClock restarted = open(Duration.ofMillis(50))) {
			assertThat(restarted.now()).isGreaterThan(last);
		}
	}

	@Test
	void stampsPastTheReservationWithAFrozenWallClockAreCoveredFirst() throws IOException {
		try (HybridLogicalClock clock = open(Duration.ofMillis(1))) {
			for (int i = 0; i < 5_000; i++) {
				long stamp = clock.now();
				if (i % 250 == 0) {
					assertThat(markOnDisk()).isGreaterThanOrEqualTo(stamp);
				}
			}
			assertThat(clock.markWrites()).isGreaterThanOrEqualTo(3);
		}
	}

	/**
	 * Found by the nemesis (a full disk during a membership change): the mark's write
	 * failed with an unchecked I/O error, which a coordinator answered 500 "internal
	 * error"; a storage failure is a 503 to retry.
	 */
	@Test
	void aMarkThatCannotBeWrittenFailsTheStampWithAStorageFailure() throws IOException {
		HybridLogicalClock clock = open(Duration.ofMillis(1));
		// A folder where the mark's temporary file goes: every write fails, as on a full
		// disk.
		Path blocker = Files.createDirectory(this.dir.resolve("clock.tmp"));
		try {
			assertThatThrownBy(() -> {
				for (int i = 0; i < 10_000; i++) {
					clock.now();
				}
			}).isInstanceOf(StorageException.class)
				.hasMessageContaining("cannot write the clock's high-water mark")
				.hasCauseInstanceOf(IOException.class);
		}
		finally {
			Files.delete(blocker);
			clock.close();
		}
	}

	@Test
	void aDamagedMarkIsReportedNotIgnored() throws IOException {
		open(Duration.ofSeconds(1)).close();
		Path file = this.dir.resolve("clock");
		byte[] bytes = Files.readAllBytes(file);
		bytes[14] ^= 1;
		Files.write(file, bytes);
		assertThatThrownBy(() -> open(Duration.ofSeconds(1))).isInstanceOf(CorruptedStorageException.class);
	}

}
