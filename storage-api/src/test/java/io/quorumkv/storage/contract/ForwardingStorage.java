package io.quorumkv.storage.contract;

import java.util.List;
import java.util.function.Predicate;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.PurgePolicy;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.StorageStats;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A storage that passes every call to another one, for tests that change one call and
 * keep the rest: a subclass overrides what it changes. {@link #close()} leaves the
 * delegate open; whoever opened it closes it.
 *
 * <pre>{@code
 * Storage slowFlush = new ForwardingStorage(lsm) {
 *     public Mono<Void> flush() {
 *         return Mono.delay(Duration.ofSeconds(1)).then(super.flush());
 *     }
 * };
 * }</pre>
 */
public class ForwardingStorage implements Storage {

	private final Storage delegate;

	public ForwardingStorage(Storage delegate) {
		this.delegate = delegate;
	}

	/** The storage every call goes to. */
	protected Storage delegate() {
		return this.delegate;
	}

	@Override
	public Mono<Entry> get(byte[] key) {
		return this.delegate.get(key);
	}

	@Override
	public Mono<Void> upsert(Entry entry) {
		return this.delegate.upsert(entry);
	}

	@Override
	public Mono<Void> upsertAll(List<Entry> entries) {
		return this.delegate.upsertAll(entries);
	}

	@Override
	public Flux<Entry> scan(byte[] fromInclusive, byte @Nullable [] toExclusive) {
		return this.delegate.scan(fromInclusive, toExclusive);
	}

	@Override
	public Flux<Entry> scan(byte[] fromInclusive, byte @Nullable [] toExclusive, Predicate<byte[]> keys) {
		return this.delegate.scan(fromInclusive, toExclusive, keys);
	}

	@Override
	public Mono<Void> flush() {
		return this.delegate.flush();
	}

	@Override
	public Mono<Void> compact() {
		return this.delegate.compact();
	}

	@Override
	public void purgePolicy(PurgePolicy policy) {
		this.delegate.purgePolicy(policy);
	}

	@Override
	public Mono<Long> purgeTombstones() {
		return this.delegate.purgeTombstones();
	}

	@Override
	public Mono<Long> retain(Predicate<byte[]> keep) {
		return this.delegate.retain(keep);
	}

	@Override
	public Mono<Long> retain(Predicate<byte[]> keep, long entriesPerSecond) {
		return this.delegate.retain(keep, entriesPerSecond);
	}

	@Override
	public int maxKeySize() {
		return this.delegate.maxKeySize();
	}

	@Override
	public StorageStats stats() {
		return this.delegate.stats();
	}

	@Override
	public void close() {
	}

}
