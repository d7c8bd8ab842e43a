package io.quorumkv.storage.contract;

import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import io.quorumkv.storage.Expiry;
import io.quorumkv.storage.Keys;
import io.quorumkv.storage.PurgePolicy;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.StorageClosedException;
import io.quorumkv.storage.StorageStats;
import io.quorumkv.storage.Throttle;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The reference model of the SPI: a sorted map keeping the greatest entry per key. It
 * passes the contract kit and serves as the expected state in model-based tests.
 * Instances opened on the same folder share their data, which models persistence. Reads
 * judge expiry by the model's clock; {@link #find} and {@link #snapshot} show the kept
 * entries as they were written.
 */
public final class ModelStorage implements Storage {

	private static final Map<Path, ConcurrentSkipListMap<byte[], Entry>> DISKS = new ConcurrentHashMap<>();

	private final ConcurrentSkipListMap<byte[], Entry> data;

	private final AtomicBoolean closed = new AtomicBoolean();

	private final AtomicLong upserts = new AtomicLong();

	private final Clock clock;

	private volatile PurgePolicy purgePolicy = PurgePolicy.KEEP_ALL;

	private ModelStorage(ConcurrentSkipListMap<byte[], Entry> data, Clock clock) {
		this.data = data;
		this.clock = clock;
	}

	/** A model that forgets everything on close. */
	public static ModelStorage inMemory() {
		return new ModelStorage(new ConcurrentSkipListMap<>(Keys.ORDER), Clock.systemUTC());
	}

	/**
	 * A model whose data outlives close and is seen again by the next open of
	 * {@code dir}.
	 */
	public static ModelStorage open(Path dir) {
		return open(dir, Clock.systemUTC());
	}

	/** {@link #open(Path)}, judging expiry by {@code clock}. */
	public static ModelStorage open(Path dir, Clock clock) {
		return new ModelStorage(
				DISKS.computeIfAbsent(dir.toAbsolutePath(), (d) -> new ConcurrentSkipListMap<>(Keys.ORDER)), clock);
	}

	/** The kept entries, for comparison in model-based tests. */
	public NavigableMap<byte[], Entry> snapshot() {
		return new java.util.TreeMap<>(this.data);
	}

	/** Applies the upsert synchronously. */
	public void apply(Entry entry) {
		checkOpen();
		this.upserts.incrementAndGet();
		this.data.merge(entry.key(), entry, (kept, next) -> (EntryOrder.supersedes(next, kept)) ? next : kept);
	}

	@Override
	public Mono<Long> retain(java.util.function.Predicate<byte[]> keep, long entriesPerSecond) {
		Throttle throttle = new Throttle(entriesPerSecond);
		return Mono.fromCallable(() -> {
			checkOpen();
			long removed = 0;
			for (byte[] key : this.data.keySet()) {
				throttle.acquire(1, () -> false);
				if (!keep.test(key) && this.data.remove(key) != null) {
					removed++;
				}
			}
			return removed;
		});
	}

	public @Nullable Entry find(byte[] key) {
		return this.data.get(key);
	}

	@Override
	public Mono<Entry> get(byte[] key) {
		return Mono.fromCallable(() -> {
			checkOpen();
			Entry kept = this.data.get(key);
			return (kept != null) ? kept.asSeenAt(Expiry.nowMicros(this.clock)) : null;
		});
	}

	@Override
	public Mono<Void> upsert(Entry entry) {
		return Mono.fromRunnable(() -> apply(entry));
	}

	@Override
	public Flux<Entry> scan(byte[] fromInclusive, byte @Nullable [] toExclusive) {
		return Flux.defer(() -> {
			checkOpen();
			NavigableMap<byte[], Entry> range = (toExclusive != null)
					? (Keys.compare(fromInclusive, toExclusive) >= 0) ? new java.util.TreeMap<>()
							: this.data.subMap(fromInclusive, true, toExclusive, false)
					: this.data.tailMap(fromInclusive, true);
			long now = Expiry.nowMicros(this.clock);
			return Flux.fromIterable(range.values()).map((entry) -> entry.asSeenAt(now));
		});
	}

	@Override
	public Mono<Void> flush() {
		return Mono.fromRunnable(this::checkOpen);
	}

	@Override
	public void purgePolicy(PurgePolicy policy) {
		this.purgePolicy = policy;
	}

	/**
	 * Drops the allowed tombstones, each only if it is still the kept entry. An expired
	 * value counts as the tombstone of its timestamp.
	 */
	@Override
	public Mono<Long> purgeTombstones() {
		return Mono.fromCallable(() -> {
			checkOpen();
			long now = Expiry.nowMicros(this.clock);
			long purged = 0;
			for (Entry entry : this.data.values()) {
				if (entry.asSeenAt(now).isTombstone() && this.purgePolicy.mayPurge(entry.key(), entry.timestamp())
						&& this.data.remove(entry.key(), entry)) {
					purged++;
				}
			}
			return purged;
		});
	}

	@Override
	public StorageStats stats() {
		return new StorageStats("model", Map.of("upserts", this.upserts.get()), Map.of("keys", (long) this.data.size()),
				null);
	}

	@Override
	public void close() {
		this.closed.set(true);
	}

	private void checkOpen() {
		if (this.closed.get()) {
			throw new StorageClosedException("model");
		}
	}

}
