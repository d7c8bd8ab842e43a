package io.quorumkv.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.Compression;
import io.quorumkv.storage.lsm.LsmOptions;
import io.quorumkv.storage.lsm.LsmStorage;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The LSM with each block compression ({@code none}, {@code lz4}, {@code zstd}) on a
 * realistic value mix ({@link ValueMix}: JSON documents, text, incompressible bytes,
 * about 590 bytes a value) under keys of 16 bytes.
 *
 * <ul>
 * <li>{@link #put}: an overwrite of a random existing key with another value of the mix
 * (its flushes and compactions compress in the background);</li>
 * <li>{@link #getPresent}: a get of a random key, read from a table (a compressed block
 * from the block cache, or else copied, checked, decompressed and decoded);</li>
 * <li>{@link #scan1000}: 1000 entries from a random key.</li>
 * </ul>
 *
 * The store is prefilled once per codec and key count, closed, then compacted into the
 * deepest level, so that every read hits compressed tables; each trial works on a copy.
 * The space it takes is printed at the start of each trial ({@code # space}: data bytes
 * before and after compression, table files on disk). Run it as described in
 * {@code docs/benchmarks.md}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(2)
@Fork(value = 3, jvmArgsAppend = { "--enable-native-access=ALL-UNNAMED" })
@Warmup(iterations = 3, time = 3)
@Measurement(iterations = 5, time = 3)
public class CompressionBenchmark {

	/** Changes whenever the prefill changes. */
	static final String LAYOUT = "quorumkv-jmh compression v1: keys v<15 digits>, ValueMix seed 7, compacted";

	static final int SCAN_LENGTH = 1000;

	private static final long SEED = 7;

	@Param({ "none", "lz4", "zstd" })
	public String compression = "lz4";

	@Param("100000")
	public int keys = 100_000;

	/**
	 * The block cache in MiB, or {@code default}
	 * ({@link LsmOptions#defaultBlockCacheSize()}); {@code 0} reads every compressed
	 * block from its table, decompressing it each time.
	 */
	@Param("default")
	public String blockCache = "default";

	private @Nullable LsmStorage storage;

	private @Nullable Path copy;

	private final AtomicLong clock = new AtomicLong();

	static byte[] key(int i) {
		return String.format("v%015d", i).getBytes(StandardCharsets.UTF_8);
	}

	private Compression codec() {
		return Compression.valueOf(this.compression.toUpperCase(Locale.ROOT));
	}

	private static LsmOptions options(Path directory, Compression codec) {
		return LsmOptions.defaults(directory).withCompression(codec);
	}

	@Setup(Level.Trial)
	public void open() throws IOException {
		Path root = Dataset.root();
		Path golden = root.resolve("compression-" + this.compression + "-" + this.keys);
		Path marker = golden.resolve("prefill.done");
		if (!Files.isRegularFile(marker) || !Files.readString(marker).equals(LAYOUT)) {
			build(golden, codec(), this.keys);
			Files.writeString(marker, LAYOUT);
		}
		Files.createDirectories(root);
		this.copy = Files.createTempDirectory(root, "run-compression-" + ProcessHandle.current().pid() + "-");
		Dataset.copyTree(golden.resolve("data"), this.copy.resolve("data"));
		LsmOptions options = options(this.copy.resolve("data"), codec());
		if (!this.blockCache.equals("default")) {
			options = options.withBlockCacheSize(Long.parseLong(this.blockCache) << 20);
		}
		this.storage = LsmStorage.open(options);
		Map<String, Long> gauges = this.storage.stats().gauges();
		long raw = gauges.get("tables.data.raw.bytes");
		long stored = gauges.get("tables.data.stored.bytes");
		System.out.printf(Locale.ROOT,
				"# space %s: %,d keys, data %,d bytes raw, %,d stored (%.1f%% saved), table files %,d bytes,"
						+ " block cache %,d bytes%n",
				this.compression, this.keys, raw, stored, 100.0 * (raw - stored) / raw,
				tableBytes(this.copy.resolve("data")), options.blockCacheSize());
		this.clock.set(TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis()));
	}

	static long tableBytes(Path dir) throws IOException {
		try (Stream<Path> files = Files.list(dir)) {
			long total = 0;
			for (Path file : files.filter((f) -> f.toString().endsWith(".sst")).toList()) {
				total += Files.size(file);
			}
			return total;
		}
	}

	/** Writes the keys in batches, closes (a flush), reopens and compacts everything. */
	static void build(Path golden, Compression codec, int keys) throws IOException {
		Dataset.deleteTree(golden);
		Path data = golden.resolve("data");
		Files.createDirectories(data);
		long start = System.nanoTime();
		try (LsmStorage storage = LsmStorage.open(options(data, codec))) {
			List<Entry> batch = new ArrayList<>(1000);
			for (int i = 0; i < keys; i++) {
				batch.add(Entry.value(key(i), ValueMix.value(SEED, i), 1_000_000L + i));
				if (batch.size() == 1000 || i == keys - 1) {
					storage.upsertAll(batch).block(Duration.ofMinutes(5));
					batch.clear();
				}
			}
		}
		try (LsmStorage storage = LsmStorage.open(options(data, codec))) {
			storage.compact().block(Duration.ofMinutes(30));
		}
		System.out.printf("# quorumkv-jmh: prefilled lsm/%s with %,d keys in %.1f s into %s%n", codec, keys,
				(System.nanoTime() - start) / 1e9, golden);
	}

	@TearDown(Level.Trial)
	public void close() throws IOException {
		LsmStorage open = this.storage;
		this.storage = null;
		if (open != null) {
			Map<String, Long> counters = open.stats().counters();
			System.out.printf(Locale.ROOT, "# block cache: %,d hits, %,d misses, %,d evictions%n",
					counters.get("block.cache.hits"), counters.get("block.cache.misses"),
					counters.get("block.cache.evictions"));
			open.close();
		}
		Path folder = this.copy;
		this.copy = null;
		if (folder != null) {
			Dataset.deleteTree(folder);
		}
	}

	private LsmStorage storage() {
		LsmStorage open = this.storage;
		if (open == null) {
			throw new IllegalStateException("not open");
		}
		return open;
	}

	@Benchmark
	public Entry put() {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		Entry entry = Entry.value(key(random.nextInt(this.keys)), ValueMix.value(SEED + 1, random.nextInt(this.keys)),
				this.clock.incrementAndGet());
		storage().upsert(entry).block();
		return entry;
	}

	@Benchmark
	public @Nullable Entry getPresent() {
		return storage().get(key(ThreadLocalRandom.current().nextInt(this.keys))).block();
	}

	/** Consumes every entry in the blackhole; answers how many there were. */
	@Benchmark
	public long scan1000(Blackhole blackhole) {
		int start = ThreadLocalRandom.current().nextInt(Math.max(1, this.keys - SCAN_LENGTH));
		Long count = storage().scan(key(start), null).take(SCAN_LENGTH).doOnNext(blackhole::consume).count().block();
		return (count != null) ? count : 0;
	}

}
