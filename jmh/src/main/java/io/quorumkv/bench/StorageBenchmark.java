package io.quorumkv.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
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
 * The storage SPI as a caller pays for it ({@code .block()} on the returned publisher),
 * per backend, on a store prefilled with {@code keys} keys of 16 bytes and values of 100
 * bytes.
 *
 * <ul>
 * <li>{@link #put}: upsert of a random existing key with a random value and a newer
 * timestamp (an overwrite that wins last-write-wins);</li>
 * <li>{@link #putList32}: 32 such upserts in one {@code upsertAll};</li>
 * <li>{@link #getPresent}: get of a random existing key;</li>
 * <li>{@link #getAbsent}: get of a key never written that sorts between existing ones
 * (bloom filter or index work, no key-range shortcut);</li>
 * <li>{@link #scan1000}: a range scan from a random existing key, consuming 1000
 * entries;</li>
 * <li>{@link #scan1000Quarter}: the same range filtered by key to about a quarter.</li>
 * </ul>
 *
 * Each trial opens a fresh copy of a store prefilled once per backend and key count (see
 * {@link Dataset}); two threads (one per core of the reference machine) share it.
 * {@code rocksdb} writes blind, {@code rocksdb-lww} compares versions as the LSM does
 * ({@link RocksWriter}). Run it as described in {@code docs/benchmarks.md}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(2)
@Fork(value = 3, jvmArgsAppend = { "--enable-native-access=ALL-UNNAMED" })
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 5, time = 2)
public class StorageBenchmark {

	/** Entries of one {@link #putList32} call. */
	static final int LIST_LENGTH = 32;

	/** Entries {@link #scan1000} consumes. */
	static final int SCAN_LENGTH = 1000;

	@Param({ "lsm", "rocksdb", "rocksdb-lww", "h2", "derby" })
	public String backend = "lsm";

	/**
	 * Present keys: 100,000 (12 MiB of keys and values, inside the 64 MiB memtable and
	 * RocksDB's 64 MiB block cache) and 4,000,000 (about 470 MiB, far beyond both).
	 */
	@Param({ "100000", "4000000" })
	public int keys = 100_000;

	private @Nullable Storage storage;

	private @Nullable Path data;

	private KeySpace keySpace = new KeySpace(1);

	/** Write timestamps: microseconds of the wall clock, far above the prefill's. */
	private final AtomicLong clock = new AtomicLong();

	@Setup(Level.Trial)
	public void open() throws IOException {
		this.keySpace = new KeySpace(this.keys);
		Backend chosen = Backend.of(this.backend);
		this.data = Dataset.checkout(chosen, this.keySpace);
		this.storage = chosen.open(this.data);
		this.clock.set(TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis()));
	}

	@TearDown(Level.Trial)
	public void close() throws IOException {
		Storage open = this.storage;
		this.storage = null;
		if (open != null) {
			open.close();
		}
		Path copy = this.data;
		this.data = null;
		if (copy != null) {
			Dataset.delete(copy);
		}
	}

	@Benchmark
	public Entry put() {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		Entry entry = Entry.value(this.keySpace.present(random.nextInt(this.keys)),
				this.keySpace.value(random.nextInt()), this.clock.incrementAndGet());
		storage().upsert(entry).block();
		return entry;
	}

	/**
	 * {@link #put}'s writes {@value #LIST_LENGTH} at a time through
	 * {@link Storage#upsertAll} (a replica applying a coordinator's batch); scored per
	 * entry, like {@link #put}.
	 */
	@Benchmark
	@OperationsPerInvocation(LIST_LENGTH)
	public List<Entry> putList32() {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		List<Entry> entries = new ArrayList<>(LIST_LENGTH);
		for (int i = 0; i < LIST_LENGTH; i++) {
			entries.add(Entry.value(this.keySpace.present(random.nextInt(this.keys)),
					this.keySpace.value(random.nextInt()), this.clock.incrementAndGet()));
		}
		storage().upsertAll(entries).block();
		return entries;
	}

	@Benchmark
	public @Nullable Entry getPresent() {
		return storage().get(this.keySpace.present(ThreadLocalRandom.current().nextInt(this.keys))).block();
	}

	@Benchmark
	public @Nullable Entry getAbsent() {
		return storage().get(this.keySpace.absent(ThreadLocalRandom.current().nextInt(this.keys))).block();
	}

	/** Consumes every entry in the blackhole; answers how many there were. */
	@Benchmark
	public long scan1000(Blackhole blackhole) {
		int last = Math.max(0, this.keys - SCAN_LENGTH);
		int start = ThreadLocalRandom.current().nextInt(last + 1);
		byte[] to = (start + SCAN_LENGTH < this.keys) ? this.keySpace.present(start + SCAN_LENGTH) : null;
		Long count = storage().scan(this.keySpace.present(start), to)
			.take(SCAN_LENGTH)
			.doOnNext(blackhole::consume)
			.count()
			.block();
		return (count != null) ? count : 0;
	}

	/**
	 * The range {@link #scan1000} reads, filtered by key to about a quarter of it (by a
	 * hash of the key), as a membership change's source reads its storage: the entries it
	 * rejects cost a backend that filters before it reads the value no copy.
	 */
	@Benchmark
	public long scan1000Quarter(Blackhole blackhole) {
		int last = Math.max(0, this.keys - SCAN_LENGTH);
		int start = ThreadLocalRandom.current().nextInt(last + 1);
		byte[] to = (start + SCAN_LENGTH < this.keys) ? this.keySpace.present(start + SCAN_LENGTH) : null;
		Long count = storage()
			.scan(this.keySpace.present(start), to, (key) -> (java.util.Arrays.hashCode(key) & 3) == 0)
			.doOnNext(blackhole::consume)
			.count()
			.block();
		return (count != null) ? count : 0;
	}

	/** The trial's open store. */
	Storage storage() {
		Storage open = this.storage;
		if (open == null) {
			throw new IllegalStateException("trial not set up");
		}
		return open;
	}

}
