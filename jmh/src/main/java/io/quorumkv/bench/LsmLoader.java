package io.quorumkv.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.StorageOverloadedException;
import io.quorumkv.storage.lsm.LsmOptions;
import io.quorumkv.storage.lsm.LsmStorage;

/**
 * Fills an LSM data folder, with the node's default options, directly through the storage
 * API: the keys the load scripts use ({@code scripts/wrk2/common.lua}: prefix and ten
 * zero-padded digits, {@code k0000000042}) with random values, each key once, in a random
 * order (a bijection of the key indexes) or in key order. A node started on the folder
 * ({@code quorumkv.storage.path}) serves them. Much faster than filling through HTTP, and
 * it measures the engine alone.
 *
 * <pre>{@code
 * java -cp jmh/target/benchmarks.jar io.quorumkv.bench.LsmLoader DIR KEYS [VALUE_BYTES] [random|sequential]
 * }</pre>
 *
 * <p>
 * Writes lists of {@value #BATCH} entries ({@code upsertAll}: one WAL write per list)
 * from {@value #THREADS} threads, waits for compactions to settle (at most
 * {@value #SETTLE_SECONDS} s), closes, and prints the rate, the bytes on disk and the
 * bytes this process wrote ({@code /proc/self/io} {@code write_bytes}) against the bytes
 * accepted (key + value + 8-byte timestamp per entry). Timestamps are the loader's start
 * in wall-clock microseconds, so any later write through a node wins.
 */
public final class LsmLoader {

	static final int BATCH = 256;

	static final int THREADS = 2;

	static final int SETTLE_SECONDS = 600;

	/**
	 * Retries of one list the engine refused as overloaded (a write stall over its
	 * limit).
	 */
	static final int MAX_RETRIES = 100;

	private LsmLoader() {
	}

	public static void main(String[] args) throws Exception {
		if (args.length < 2) {
			System.err.println("usage: LsmLoader DIR KEYS [VALUE_BYTES] [random|sequential]");
			System.exit(2);
		}
		Path dir = Path.of(args[0]);
		long keys = Long.parseLong(args[1]);
		int valueBytes = (args.length > 2) ? Integer.parseInt(args[2]) : 100;
		boolean random = !(args.length > 3 && args[3].equals("sequential"));
		if (keys < 1 || keys > 10_000_000_000L || valueBytes < 0) {
			throw new IllegalArgumentException("KEYS must be 1..1e10 and VALUE_BYTES >= 0");
		}
		load(dir, keys, valueBytes, random);
	}

	static void load(Path dir, long keys, int valueBytes, boolean random) throws Exception {
		long timestamp = TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis());
		long writtenBefore = processWriteBytes();
		long start = System.nanoTime();
		AtomicLong done = new AtomicLong();
		AtomicLong accepted = new AtomicLong();
		long step = random ? coprimeStep(keys) : 1;
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(dir))) {
			List<Thread> threads = new ArrayList<>();
			for (int t = 0; t < THREADS; t++) {
				int worker = t;
				threads.add(Thread.ofPlatform().name("loader-" + t).start(() -> {
					SplittableRandom values = new SplittableRandom(worker);
					byte[][] pool = new byte[1024][valueBytes];
					for (byte[] value : pool) {
						values.nextBytes(value);
					}
					List<Entry> list = new ArrayList<>(BATCH);
					for (long first = (long) worker * BATCH; first < keys; first += (long) THREADS * BATCH) {
						list.clear();
						long end = Math.min(keys, first + BATCH);
						long bytes = 0;
						for (long i = first; i < end; i++) {
							long index = Math.floorMod(i * step, keys);
							byte[] key = key(index);
							byte[] value = pool[(int) (index & 1023)];
							list.add(Entry.value(key, value, timestamp));
							bytes += key.length + value.length + Long.BYTES;
						}
						write(storage, list);
						done.addAndGet(end - first);
						accepted.addAndGet(bytes);
					}
				}));
			}
			long lastReport = System.nanoTime();
			for (Thread thread : threads) {
				while (thread.isAlive()) {
					thread.join(1000);
					if (System.nanoTime() - lastReport > TimeUnit.SECONDS.toNanos(10)) {
						lastReport = System.nanoTime();
						System.out.printf(Locale.ROOT, "loader: %,d of %,d entries, %.0f/s%n", done.get(), keys,
								done.get() / seconds(start));
					}
				}
			}
			long loaded = System.nanoTime();
			storage.flush().block(Duration.ofMinutes(10));
			settle(storage);
			System.out.printf(Locale.ROOT,
					"loader: %,d entries (%,d bytes accepted) written in %.1f s (%.0f entries/s); "
							+ "WAL forced and compactions settled %.1f s later%n",
					keys, accepted.get(), (loaded - start) / 1e9, keys / ((loaded - start) / 1e9),
					(System.nanoTime() - loaded) / 1e9);
			System.out.println("loader: engine " + storage.stats().gauges() + " " + storage.stats().counters());
		}
		long diskBytes = folderBytes(dir);
		long wroteBytes = processWriteBytes() - writtenBefore;
		System.out.printf(Locale.ROOT,
				"loader: total %.1f s; on disk %,d bytes (space amplification %.2f); the process wrote %,d bytes "
						+ "(write amplification %.2f)%n",
				seconds(start), diskBytes, (double) diskBytes / accepted.get(), wroteBytes,
				(double) wroteBytes / accepted.get());
	}

	/**
	 * Key {@code i} as the load scripts write it: {@code k} and ten zero-padded digits.
	 */
	static byte[] key(long i) {
		return String.format(Locale.ROOT, "k%010d", i).getBytes(StandardCharsets.US_ASCII);
	}

	/**
	 * A step coprime with {@code n} near {@code n / φ}: {@code i * step mod n} permutes
	 * 0..n-1.
	 */
	static long coprimeStep(long n) {
		long step = Math.max(1, (long) (n * 0.6180339887));
		for (long tries = 0; tries < n && gcd(step, n) != 1; tries++) {
			step = (step % n) + 1;
		}
		return step;
	}

	private static long gcd(long a, long b) {
		return (b == 0) ? a : gcd(b, a % b);
	}

	private static void write(LsmStorage storage, List<Entry> list) {
		for (int attempt = 0;; attempt++) {
			try {
				storage.upsertAll(list).block();
				return;
			}
			catch (StorageOverloadedException ex) {
				if (attempt >= MAX_RETRIES) {
					throw ex;
				}
			}
		}
	}

	/** Waits until no compaction is pending and no memtable waits for its flush. */
	private static void settle(LsmStorage storage) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(SETTLE_SECONDS);
		while (System.nanoTime() < deadline) {
			var gauges = storage.stats().gauges();
			if (gauges.getOrDefault("compaction.pending.bytes", 0L) == 0
					&& gauges.getOrDefault("memtables.immutable", 0L) == 0) {
				return;
			}
			Thread.sleep(500);
		}
		System.out.println("loader: compaction still pending after " + SETTLE_SECONDS + " s");
	}

	private static double seconds(long startNanos) {
		return (System.nanoTime() - startNanos) / 1e9;
	}

	private static long folderBytes(Path dir) throws IOException {
		try (Stream<Path> files = Files.walk(dir)) {
			return files.filter(Files::isRegularFile).mapToLong((file) -> file.toFile().length()).sum();
		}
	}

	/**
	 * Bytes this process caused to be written to storage, or 0 where Linux does not say.
	 */
	static long processWriteBytes() throws IOException {
		Path io = Path.of("/proc/self/io");
		if (!Files.isReadable(io)) {
			return 0;
		}
		for (String line : Files.readAllLines(io, StandardCharsets.US_ASCII)) {
			if (line.startsWith("write_bytes:")) {
				return Long.parseLong(line.substring("write_bytes:".length()).trim());
			}
		}
		return 0;
	}

}
