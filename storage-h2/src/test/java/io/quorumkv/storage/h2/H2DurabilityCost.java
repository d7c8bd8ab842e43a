package io.quorumkv.storage.h2;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import io.quorumkv.storage.Entry;
import reactor.core.publisher.Flux;

/**
 * The cost of each H2 durability mode, timed (not a test; docs/storage-h2.md gives the
 * command and the figures): per mode, a fresh database takes 16 concurrent upserts of
 * 100-byte values under new keys for a warm-up, then for the measured time; printed:
 * upserts per second, latency percentiles, the database file's size after the run and
 * after close.
 *
 * <pre>
 * java -cp ... io.quorumkv.storage.h2.H2DurabilityCost [seconds] [modes...]
 * </pre>
 */
final class H2DurabilityCost {

	private static final int IN_FLIGHT = 16;

	private H2DurabilityCost() {
	}

	public static void main(String[] args) throws IOException {
		int seconds = (args.length > 0) ? Integer.parseInt(args[0]) : 10;
		H2Durability[] modes = (args.length > 1)
				? Arrays.stream(args, 1, args.length).map(H2Durability::valueOf).toArray(H2Durability[]::new)
				: H2Durability.values();
		Path root = Files.createTempDirectory("h2-durability-cost");
		try {
			System.out.printf("%-18s %10s %9s %9s %9s %14s %14s%n", "durability", "upserts/s", "p50 ms", "p99 ms",
					"upserts", "MiB after run", "MiB closed");
			for (H2Durability mode : modes) {
				measure(root.resolve(mode.name()), mode, seconds);
			}
		}
		finally {
			try (Stream<Path> files = Files.walk(root)) {
				for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
					Files.deleteIfExists(p);
				}
			}
		}
	}

	private static void measure(Path dir, H2Durability mode, int seconds) throws IOException {
		AtomicInteger next = new AtomicInteger();
		H2StorageOptions options = H2StorageOptions.defaults(dir).withDurability(mode, Duration.ofMillis(100));
		long[] latencies;
		int count;
		long elapsed;
		try (H2Storage storage = H2Storage.open(options)) {
			write(storage, next, Math.max(2, seconds / 5), new long[0]);
			latencies = new long[2_000_000];
			long start = System.nanoTime();
			count = write(storage, next, seconds, latencies);
			elapsed = System.nanoTime() - start;
			System.out.printf("%-18s %10.0f %9.2f %9.2f %9d %14.1f", mode, count * 1e9 / elapsed,
					percentile(latencies, count, 0.50), percentile(latencies, count, 0.99), count, mib(dir));
		}
		System.out.printf(" %14.1f%n", mib(dir));
	}

	/** Writes new keys with {@link #IN_FLIGHT} upserts at once for {@code seconds}. */
	private static int write(H2Storage storage, AtomicInteger next, int seconds, long[] latencies) {
		long deadline = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
		AtomicInteger done = new AtomicInteger();
		byte[] value = new byte[100];
		Flux.<Integer>generate((sink) -> {
			if (System.nanoTime() < deadline) {
				sink.next(next.getAndIncrement());
			}
			else {
				sink.complete();
			}
		}).flatMap((i) -> {
			long start = System.nanoTime();
			byte[] key = String.format("key-%010d", i).getBytes(StandardCharsets.UTF_8);
			return storage.upsert(Entry.value(key, value, i)).doOnSuccess((v) -> {
				int n = done.getAndIncrement();
				if (n < latencies.length) {
					latencies[n] = System.nanoTime() - start;
				}
			});
		}, IN_FLIGHT).blockLast();
		return Math.min(done.get(), latencies.length);
	}

	private static double percentile(long[] latencies, int count, double p) {
		long[] sorted = Arrays.copyOf(latencies, count);
		Arrays.sort(sorted);
		return (count == 0) ? 0 : sorted[(int) Math.min(count - 1, Math.floor(p * count))] / 1e6;
	}

	private static double mib(Path dir) throws IOException {
		try (Stream<Path> files = Files.list(dir)) {
			return files.mapToLong((p) -> p.toFile().length()).sum() / (1024.0 * 1024.0);
		}
	}

}
