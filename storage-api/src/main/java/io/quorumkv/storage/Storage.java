package io.quorumkv.storage;

import java.util.List;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A node's local store of versioned entries: the SPI every backend implements.
 *
 * <p>
 * Semantics every backend must keep (the contract kit in this module's test-jar checks
 * them):
 * <ul>
 * <li>{@link #upsert} keeps, per key, the greatest entry by {@link EntryOrder}; an older
 * or equal write is a no-op. Writes can therefore arrive in any order.</li>
 * <li>{@link #get} answers the kept entry, tombstones included, and completes empty for a
 * key never written.</li>
 * <li>{@link #scan} streams kept entries in {@link Keys#ORDER}, tombstones included,
 * lazily and with backpressure: a range of a million keys is never held in memory.</li>
 * <li>{@link #flush} completes once everything upserted before it is on disk.</li>
 * <li>Expiry: {@link #get} and {@link #scan} answer a kept value whose
 * {@link Entry#expiresAt() expiry} has passed by the backend's clock (a {@code Clock}
 * given when it is opened) as the tombstone it turned into,
 * {@code Entry.tombstone(key, timestamp)} ({@link Entry#asSeenAt}): expired data reads as
 * deleted, and still shadows older versions for repair. Upserts keep the expiry with the
 * entry; the order of versions ({@link EntryOrder}) does not depend on the clock. A
 * backend may store an expired value as that tombstone, and purges it under the rule of
 * its tombstones.</li>
 * </ul>
 * All methods are lazy: nothing happens until subscription. A backend that blocks (JDBC)
 * does its work on a bounded scheduler of its own, never on the caller's thread, so that
 * the service can call it from a Netty event loop.
 *
 * <pre>{@code
 * storage.upsert(Entry.value(key, value, ts))
 *     .then(storage.get(key))
 *     .map(Entry::value);
 * }</pre>
 */
public interface Storage extends AutoCloseable {

	/**
	 * The kept entry of {@code key}, tombstone included (an expired value as its
	 * tombstone); empty if never written.
	 */
	Mono<Entry> get(byte[] key);

	/** Keeps {@code entry} if it is greater than the kept one by {@link EntryOrder}. */
	Mono<Void> upsert(Entry entry);

	/**
	 * Upserts of the default implementation's batch that run at once: a backend on a
	 * bounded worker pool sees at most this many of them queued.
	 */
	int UPSERT_ALL_CONCURRENCY = 32;

	/**
	 * Keeps each of {@code entries} as {@link #upsert} would, in any order (the greatest
	 * by {@link EntryOrder} wins, also between entries of one key in the list); completes
	 * once all are kept. On a failure some of them may have been kept, which is safe:
	 * upserts are idempotent. A replica applies a coordinator's batch with it.
	 *
	 * <p>
	 * Backends that can write many entries for the price of one override it (the LSM: one
	 * WAL write for the batch); the default runs up to {@link #UPSERT_ALL_CONCURRENCY}
	 * upserts at once.
	 *
	 * <pre>{@code
	 * storage.upsertAll(List.of(Entry.value(a, v1, ts), Entry.tombstone(b, ts)))
	 * }</pre>
	 */
	default Mono<Void> upsertAll(List<Entry> entries) {
		return Flux.fromIterable(entries).flatMap(this::upsert, UPSERT_ALL_CONCURRENCY).then();
	}

	/**
	 * Kept entries with {@code fromInclusive <= key < toExclusive} in unsigned key order,
	 * tombstones included (expired values as their tombstones, judged at one instant per
	 * scan); {@code toExclusive == null} means no upper bound.
	 */
	Flux<Entry> scan(byte[] fromInclusive, byte @Nullable [] toExclusive);

	/**
	 * As {@link #scan(byte[], byte[])}, keeping only the entries whose key {@code keys}
	 * accepts. A backend may ask before it reads an entry's value, so an entry it rejects
	 * costs no copy (the LSM does): what a membership change's source uses to find the
	 * quarter of its entries a target owns.
	 *
	 * <p>
	 * The predicate may be asked about one key more than once (once per stored version)
	 * and must give the same answer each time; it must neither keep nor change the array
	 * it is given, which the backend may reuse.
	 *
	 * <pre>{@code
	 * storage.scan(from, null, (key) -> placement.isReplica(key, rf, target))
	 * }</pre>
	 */
	default Flux<Entry> scan(byte[] fromInclusive, byte @Nullable [] toExclusive, Predicate<byte[]> keys) {
		return scan(fromInclusive, toExclusive).filter((entry) -> keys.test(entry.key()));
	}

	/** Completes when every upsert that completed before the subscription is durable. */
	Mono<Void> flush();

	/**
	 * Asks the backend to compact now; backends without compaction complete at once.
	 * Completes when the compaction it started has finished.
	 */
	default Mono<Void> compact() {
		return Mono.empty();
	}

	/**
	 * Sets the rule this backend purges tombstones by, from now on. A backend drops a
	 * tombstone only when the policy allows it, and also keeps its own conditions (the
	 * LSM: its grace period, and no older version of the key left outside the
	 * compaction). Until a policy is set, the LSM purges by its own grace period alone
	 * and the others purge nothing. Backends that never purge ignore it.
	 */
	default void purgePolicy(PurgePolicy policy) {
	}

	/**
	 * Drops now, in batches, the tombstones the {@link #purgePolicy purge policy} allows,
	 * and completes with the number dropped. A tombstone replaced meanwhile by a newer
	 * version is not touched (the newer version stays). Backends that purge during their
	 * compactions (the LSM) complete at once with 0: every compaction applies the policy,
	 * and {@link #compact()} runs one over everything.
	 *
	 * <pre>{@code
	 * storage.purgePolicy(PurgePolicy.ANY);
	 * long dropped = storage.purgeTombstones().block();
	 * }</pre>
	 */
	default Mono<Long> purgeTombstones() {
		return Mono.just(0L);
	}

	/**
	 * Removes every kept entry whose key {@code keep} rejects, leaving no tombstone, and
	 * completes with how many were removed: how a node drops the keys it no longer owns
	 * once a membership change has moved them to other nodes. It is meant for keys nobody
	 * writes here any more; an entry written for such a key while this runs may or may
	 * not be removed, and one written after it completes is kept.
	 *
	 * <p>
	 * Every backend of the project implements it (the contract kit checks it); the
	 * default is for stores that cannot remove an entry without a tombstone, and fails.
	 *
	 * <pre>{@code
	 * storage.retain((key) -> placement.owns(self, key))
	 * }</pre>
	 */
	default Mono<Long> retain(Predicate<byte[]> keep) {
		return retain(keep, Throttle.UNLIMITED);
	}

	/**
	 * As {@link #retain(Predicate)}, looking at no more than {@code entriesPerSecond}
	 * entries a second (kept or removed; a {@link Throttle}), so that a clean-up leaves
	 * the cores to the requests: at full speed it reads and rewrites a node's whole store
	 * as fast as one core allows.
	 *
	 * <pre>{@code
	 * storage.retain((key) -> placement.owns(self, key), 50_000)
	 * }</pre>
	 * @param entriesPerSecond the rate, positive; {@link Throttle#UNLIMITED} for none
	 * @throws IllegalArgumentException when the rate is not positive
	 */
	default Mono<Long> retain(Predicate<byte[]> keep, long entriesPerSecond) {
		return Mono.error(new UnsupportedOperationException(
				getClass().getSimpleName() + " cannot remove entries without a tombstone"));
	}

	/**
	 * The longest key this backend stores, in bytes; longer keys are refused with an
	 * {@link IllegalArgumentException}. The service checks its own key limit against it
	 * at start, so a client gets a 400, never this exception.
	 */
	default int maxKeySize() {
		return Integer.MAX_VALUE;
	}

	/** A snapshot of counters and gauges; cheap, called by metrics polling. */
	StorageStats stats();

	/**
	 * Stops background work, makes everything durable and releases files. Idempotent;
	 * later calls of the other methods fail with {@link StorageClosedException}.
	 */
	@Override
	void close();

}
