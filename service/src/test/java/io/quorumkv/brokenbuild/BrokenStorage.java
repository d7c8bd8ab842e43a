package io.quorumkv.brokenbuild;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

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
 * written);</li>
 * <li>{@code last-arrival-wins}: a replica's point reads answer the write that arrived
 * last rather than the greatest, while its scans answer the greatest (a write with an
 * even timestamp applied 700 ms late, so that of two concurrent writers' writes the older
 * often arrives last): GETs older by version than a write they must see;</li>
 * <li>{@code ignore-ttl}: writes are stored without their expiry (values read past their
 * ttl);</li>
 * <li>{@code scan-skips-recent}: a scan leaves out the entries written in the last 2 s,
 * as one that skipped the memtable would (stale scans);</li>
 * <li>{@code phantom-versions}: a value read comes back stamped 30 s later than its write
 * (versions no write produced).</li>
 * </ul>
 * ({@code wrong-304} is {@link BrokenNotModified}'s.) Everything else is the real
 * storage.
 */
final class BrokenStorage implements Storage {

	/**
	 * How many keys {@code last-arrival-wins} remembers (its keys are the test's few).
	 */
	private static final int MAX_ARRIVALS = 100_000;

	/** How much later {@code phantom-versions} stamps a value read: 30 s. */
	private static final long PHANTOM_SHIFT = 30_000_000;

	/** How recent an entry {@code scan-skips-recent} leaves out: 2 s. */
	private static final long RECENT_MICROS = 2_000_000;

	private final Storage delegate;

	private final BrokenMode mode;

	/** The last write that arrived, by key, in {@code last-arrival-wins}. */
	private final Map<ByteBuffer, Entry> arrivals = new ConcurrentHashMap<>();

	BrokenStorage(Storage delegate, BrokenMode mode) {
		this.delegate = delegate;
		this.mode = mode;
	}

	@Override
	public Mono<Entry> get(byte[] key) {
		Mono<Entry> entry = this.delegate.get(key);
		return switch (this.mode.get()) {
			case "corrupt-reads" ->
				entry.map((e) -> (e.value() == null) ? e : Entry.value(e.key(), corrupt(e.value()), e.timestamp()));
			case "last-arrival-wins" -> {
				Entry arrived = this.arrivals.get(ByteBuffer.wrap(key));
				yield (arrived != null) ? Mono.just(arrived) : entry;
			}
			case "phantom-versions" ->
				entry.map((e) -> new Entry(e.key(), e.value(), e.timestamp() + PHANTOM_SHIFT, e.expiresAt()));
			default -> entry;
		};
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
			case "last-arrival-wins" -> Mono.delay(Duration.ofMillis(lateness(entry)))
				.then(this.delegate.upsert(entry))
				.doOnSuccess((ignored) -> {
					if (this.arrivals.size() < MAX_ARRIVALS) {
						this.arrivals.put(ByteBuffer.wrap(entry.key()), entry);
					}
				});
			case "ignore-ttl" -> this.delegate
				.upsert(entry.expires() ? new Entry(entry.key(), entry.value(), entry.timestamp()) : entry);
			case "reversed-lww" -> this.delegate.get(entry.key())
				.map((existing) -> existing.timestamp() < entry.timestamp())
				.defaultIfEmpty(false)
				.flatMap((keepOlder) -> keepOlder ? Mono.<Void>empty() : this.delegate.upsert(entry));
			default -> this.delegate.upsert(entry);
		};
	}

	/**
	 * How late {@code last-arrival-wins} applies a write: 700 ms for an even timestamp,
	 * at once for an odd one, on every replica alike, so that of two concurrent writes
	 * the older often arrives last everywhere (and the newer is read before it does).
	 */
	private static long lateness(Entry entry) {
		return ((entry.timestamp() & 1) == 0) ? 700 : 0;
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
		if (this.mode.get().equals("scan-skips-recent")) {
			return Flux.defer(() -> {
				long recent = System.currentTimeMillis() * 1_000 - RECENT_MICROS;
				return this.delegate.scan(fromInclusive, toExclusive).filter((e) -> e.timestamp() < recent);
			});
		}
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
