package io.quorumkv.storage.lsm;

import static io.quorumkv.storage.contract.Entries.bytes;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.contract.ManualClock;
import org.jspecify.annotations.Nullable;

/**
 * The data folder of the test resource {@code format-v2}: what it holds
 * ({@link #expected}) and how it was written ({@link #main}), so that the fixture can be
 * read as a specification and a later format's fixture written the same way. The files in
 * the resource are frozen: {@code FormatV2StoreTest} reads them, never this writer's
 * output of the day.
 *
 * <p>
 * Keys {@code v2-key-0000} to {@code v2-key-0679}, written in four sessions of the engine
 * (each opened on the folder with another compression setting) and a crash:
 * <ol>
 * <li>LZ4, then a full compaction (the deepest level): keys 0-399 at timestamp
 * {@code 2000 + i}, a tombstone when {@code i % 7 == 3} (purged by the compaction: far
 * older than the grace period), an entry expiring on 1 January 2100 when
 * {@code i % 7 == 5}, else the value {@code value-<i>-} and {@code i % 50} times
 * {@code x};</li>
 * <li>no compression, a level-0 table: keys 400-479 ({@code value-<i>}), and of keys
 * 0-399 those with {@code i % 10 == 0} overwritten by {@code b-<i>} at
 * {@code 5000 + i};</li>
 * <li>zstd, a level-0 table: keys 480-559 ({@code value-<i>-zstd-} and {@code i % 30}
 * times {@code z}), and of keys 0-399 those with {@code i % 10 == 1} deleted by
 * tombstones at {@code 5000 + i};</li>
 * <li>LZ4, a level-0 table: keys 560-639, expiring on 1 January 2100 for even {@code i},
 * a value for odd; then only in the WAL, keys 640-679 (a value when {@code i % 4 == 0},
 * an entry expiring on 1 January 2100 when {@code i % 4 == 2}, a tombstone for odd
 * {@code i}) and, of keys 0-399, those with {@code i % 10 == 2} overwritten by
 * {@code d-<i>} at {@code 6000 + i}; the WAL forced and the folder copied while the
 * engine was open: a crash image.</li>
 * </ol>
 * Nothing in it has expired by any clock before 2100.
 */
final class FormatV2Fixture {

	static final int KEYS = 680;

	/** 1 January 2100, in microseconds since the epoch. */
	static final long EXPIRES_AT = Instant.parse("2100-01-01T00:00:00Z").toEpochMilli() * 1_000L;

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private FormatV2Fixture() {
	}

	static byte[] key(int i) {
		return bytes(String.format("v2-key-%04d", i));
	}

	/**
	 * Key {@code i} as the fixture holds it; null where a tombstone was purged, and, once
	 * a full compaction has run on it ({@code compacted}), for every tombstone (all far
	 * older than the grace period).
	 */
	static @Nullable Entry expected(int i, boolean compacted) {
		byte[] key = key(i);
		long ts = 2_000 + i;
		if (i < 400) {
			if (i % 10 == 0) {
				return Entry.value(key, bytes("b-" + i), 5_000 + i);
			}
			if (i % 10 == 1) {
				return compacted ? null : Entry.tombstone(key, 5_000 + i);
			}
			if (i % 10 == 2) {
				return Entry.value(key, bytes("d-" + i), 6_000 + i);
			}
			if (i % 7 == 3) {
				return null;
			}
			byte[] value = bytes("value-" + i + "-" + "x".repeat(i % 50));
			return (i % 7 == 5) ? Entry.expiring(key, value, ts, EXPIRES_AT) : Entry.value(key, value, ts);
		}
		if (i < 480) {
			return Entry.value(key, bytes("value-" + i), ts);
		}
		if (i < 560) {
			return Entry.value(key, bytes("value-" + i + "-zstd-" + "z".repeat(i % 30)), ts);
		}
		if (i < 640) {
			return (i % 2 == 0) ? Entry.expiring(key, bytes("value-" + i), ts, EXPIRES_AT)
					: Entry.value(key, bytes("value-" + i), ts);
		}
		if (i % 4 == 0) {
			return Entry.value(key, bytes("value-" + i), ts);
		}
		if (i % 4 == 2) {
			return Entry.expiring(key, bytes("value-" + i), ts, EXPIRES_AT);
		}
		return compacted ? null : Entry.tombstone(key, ts);
	}

	private static LsmStorage open(Path dir, Compression codec, ManualClock clock) {
		return LsmStorage.open(LsmOptions.defaults(dir)
			.withMemtableSize(64L << 10)
			.withCompression(codec)
			.withFsync(FsyncPolicy.NEVER)
			.withCompaction(100, 256L << 20, 10, 64L << 20), clock);
	}

	private static void put(LsmStorage storage, Entry entry) {
		storage.upsert(entry).block(TIMEOUT);
	}

	private static void flush(LsmStorage storage) throws InterruptedException, ExecutionException, TimeoutException {
		storage.forceFlush().get(30, TimeUnit.SECONDS);
	}

	/**
	 * Writes the fixture into the empty folder {@code args[0]} (run from the module with
	 * the test classpath; see the resource's README).
	 */
	public static void main(String[] args) throws Exception {
		Path out = Path.of(args[0]);
		Path dir = Files.createTempDirectory("format-v2-");
		ManualClock clock = ManualClock.startingAt(Instant.parse("2030-01-01T00:00:00Z"));
		try (LsmStorage storage = open(dir, Compression.LZ4, clock)) {
			for (int i = 0; i < 400; i++) {
				byte[] key = key(i);
				byte[] value = bytes("value-" + i + "-" + "x".repeat(i % 50));
				put(storage, (i % 7 == 3) ? Entry.tombstone(key, 2_000 + i) : (i % 7 == 5)
						? Entry.expiring(key, value, 2_000 + i, EXPIRES_AT) : Entry.value(key, value, 2_000 + i));
			}
			storage.compact().block(TIMEOUT);
		}
		try (LsmStorage storage = open(dir, Compression.NONE, clock)) {
			for (int i = 400; i < 480; i++) {
				put(storage, Entry.value(key(i), bytes("value-" + i), 2_000 + i));
			}
			for (int i = 0; i < 400; i += 10) {
				put(storage, Entry.value(key(i), bytes("b-" + i), 5_000 + i));
			}
			flush(storage);
		}
		try (LsmStorage storage = open(dir, Compression.ZSTD, clock)) {
			for (int i = 480; i < 560; i++) {
				put(storage, Entry.value(key(i), bytes("value-" + i + "-zstd-" + "z".repeat(i % 30)), 2_000 + i));
			}
			for (int i = 1; i < 400; i += 10) {
				put(storage, Entry.tombstone(key(i), 5_000 + i));
			}
			flush(storage);
		}
		try (LsmStorage storage = open(dir, Compression.LZ4, clock)) {
			for (int i = 560; i < 640; i++) {
				put(storage, (i % 2 == 0) ? Entry.expiring(key(i), bytes("value-" + i), 2_000 + i, EXPIRES_AT)
						: Entry.value(key(i), bytes("value-" + i), 2_000 + i));
			}
			flush(storage);
			for (int i = 640; i < KEYS; i++) {
				put(storage, Objects.requireNonNull(expected(i, false)));
			}
			for (int i = 2; i < 400; i += 10) {
				put(storage, Entry.value(key(i), bytes("d-" + i), 6_000 + i));
			}
			storage.flush().block(TIMEOUT);
			Files.createDirectories(out);
			try (Stream<Path> files = Files.list(dir)) {
				for (Path file : files.filter((f) -> Files.isRegularFile(f) && !f.endsWith("LOCK")).sorted().toList()) {
					Files.copy(file, out.resolve(file.getFileName()), StandardCopyOption.COPY_ATTRIBUTES);
					System.out.println(file.getFileName() + " " + Files.size(file));
				}
			}
		}
		try (Stream<Path> files = Files.walk(dir)) {
			for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
				Files.delete(file);
			}
		}
	}

}
