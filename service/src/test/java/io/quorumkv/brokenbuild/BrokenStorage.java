package io.quorumkv.brokenbuild;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.StorageStats;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A storage that breaks one promise at a time:
 * <ul>
 * <li>{@code ack-before-write}: a write is confirmed at once and applied 3 s later (a
 * replica acknowledging before writing: quorum reads in between are stale);</li>
 * <li>{@code ack-without-write}: one write in three is confirmed and never applied
 * (acknowledged writes lost); which ones is decided by the write's key and timestamp, so
 * every replica drops the same writes and a dropped write is gone from the cluster, not
 * repaired from a replica that kept it;</li>
 * <li>{@code reversed-lww}: of two versions the older is kept (last write wins reversed:
 * later writes and deletes are lost);</li>
 * <li>{@code corrupt-reads}: a value read comes back with a byte more (values never
 * written).</li>
 * </ul>
 * Everything else is the real storage.
 */
final class BrokenStorage implements Storage {

	private final Storage delegate;

	private final BrokenMode mode;

	BrokenStorage(Storage delegate, BrokenMode mode) {
		this.delegate = delegate;
		this.mode = mode;
	}

	@Override
	public Mono<Entry> get(byte[] key) {
		Mono<Entry> entry = this.delegate.get(key);
		if (this.mode.get().equals("corrupt-reads")) {
			return entry.map((e) -> (e.value() == null) ? e : Entry.value(e.key(), corrupt(e.value()), e.timestamp()));
		}
		return entry;
	}

	private static byte[] corrupt(byte[] value) {
		return (new String(value, StandardCharsets.UTF_8) + "!").getBytes(StandardCharsets.UTF_8);
	}

	@Override
	public Mono<Void> upsert(Entry entry) {
		return switch (this.mode.get()) {
			case "ack-before-write" -> Mono.fromRunnable(
					() -> Mono.delay(Duration.ofSeconds(3)).then(this.delegate.upsert(entry)).subscribe((ignored) -> {
					}, (error) -> {
					}));
			case "ack-without-write" -> dropped(entry) ? Mono.empty() : this.delegate.upsert(entry);
			case "reversed-lww" -> this.delegate.get(entry.key())
				.map((existing) -> existing.timestamp() < entry.timestamp())
				.defaultIfEmpty(false)
				.flatMap((keepOlder) -> keepOlder ? Mono.<Void>empty() : this.delegate.upsert(entry));
			default -> this.delegate.upsert(entry);
		};
	}

	private static boolean dropped(Entry entry) {
		return Math.floorMod(31 * Arrays.hashCode(entry.key()) + Long.hashCode(entry.timestamp()), 3) == 0;
	}

	@Override
	public Mono<Void> upsertAll(List<Entry> entries) {
		// Through upsert one by one when broken, so that every write misbehaves.
		return this.mode.get().equals("none") ? this.delegate.upsertAll(entries) : Storage.super.upsertAll(entries);
	}

	@Override
	public Flux<Entry> scan(byte[] fromInclusive, byte @Nullable [] toExclusive) {
		return this.delegate.scan(fromInclusive, toExclusive);
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
	public int maxKeySize() {
		return this.delegate.maxKeySize();
	}

	@Override
	public StorageStats stats() {
		return this.delegate.stats();
	}

	@Override
	public void close() {
		this.delegate.close();
	}

}
