package io.quorumkv.service.replication;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Writes that a replica missed, kept durably apart from the data until they are delivered
 * ({@link HintedHandoff}).
 *
 * <p>
 * Hints live in a storage of their own under the key {@code peer id, 0x00, key}, so the
 * store keeps per peer and key only the greatest missed version (by the same
 * {@code EntryOrder} as the data): a replica never needs an older one. The hint's value
 * is a flag byte (1 value, 0 data tombstone, 2 expiring value followed by its {@code i64}
 * expiry) and the value bytes. A hint of an expiring write is delivered even after its
 * expiry: expired, it is the tombstone that shadows the replica's older versions.
 * Delivery writes a storage tombstone at the hint's own timestamp, which beats that hint
 * and no newer one: a hint stored during delivery survives.
 */
public final class HintStore implements AutoCloseable {

	private static final byte VALUE = 1;

	private static final byte TOMBSTONE = 0;

	private static final byte EXPIRING = 2;

	private final Storage storage;

	private final long maxPendingPerPeer;

	private final Map<String, AtomicLong> pending = new ConcurrentHashMap<>();

	private final Counter stored;

	private final Counter dropped;

	public HintStore(Storage storage, List<Node> peers, long maxPendingPerPeer, MeterRegistry meters) {
		this.storage = storage;
		this.maxPendingPerPeer = maxPendingPerPeer;
		this.stored = Counter.builder("quorumkv.hints.stored").description("Hints stored").register(meters);
		this.dropped = Counter.builder("quorumkv.hints.dropped")
			.description("Hints not kept or not delivered: over the limit or too old")
			.register(meters);
		for (Node peer : peers) {
			AtomicLong count = new AtomicLong(hints(peer).count().blockOptional(Duration.ofMinutes(5)).orElse(0L));
			this.pending.put(peer.id(), count);
			Gauge.builder("quorumkv.hints.pending", count, AtomicLong::get)
				.description("Hints waiting for delivery")
				.tag("peer", peer.id())
				.register(meters);
		}
	}

	/** Keeps a write that {@code peer} missed; drops it when the peer has too many. */
	public Mono<Void> add(Node peer, Entry entry) {
		return Mono.defer(() -> {
			AtomicLong count = this.pending.computeIfAbsent(peer.id(), (id) -> new AtomicLong());
			if (count.get() >= this.maxPendingPerPeer) {
				this.dropped.increment();
				return Mono.empty();
			}
			return this.storage.upsert(Entry.value(hintKey(peer, entry.key()), encode(entry), entry.timestamp()))
				.doOnSuccess((ignored) -> {
					count.incrementAndGet();
					this.stored.increment();
				});
		});
	}

	/** The hints of a peer in key order, as the entries to deliver. */
	public Flux<Entry> hints(Node peer) {
		byte[] prefix = prefix(peer, (byte) 0);
		return this.storage.scan(prefix, prefix(peer, (byte) 1))
			.filter((hint) -> !hint.isTombstone())
			.map((hint) -> decode(Arrays.copyOfRange(hint.key(), prefix.length, hint.key().length), hint));
	}

	/** Marks a hint delivered (or given up); a newer hint of the same key stays. */
	public Mono<Void> remove(Node peer, Entry entry) {
		return this.storage.upsert(Entry.tombstone(hintKey(peer, entry.key()), entry.timestamp()))
			.doOnSuccess((ignored) -> this.pending.computeIfAbsent(peer.id(), (id) -> new AtomicLong())
				.updateAndGet((n) -> Math.max(0, n - 1)));
	}

	void dropped() {
		this.dropped.increment();
	}

	/**
	 * Hints waiting for {@code peer} (approximate: repeated hints of a key count twice).
	 */
	public long pending(Node peer) {
		AtomicLong count = this.pending.get(peer.id());
		return (count != null) ? count.get() : 0;
	}

	/** Re-counts a peer's hints after a full delivery pass. */
	void recount(Node peer, long remaining) {
		this.pending.computeIfAbsent(peer.id(), (id) -> new AtomicLong()).set(remaining);
	}

	private static byte[] prefix(Node peer, byte separator) {
		byte[] id = peer.id().getBytes(StandardCharsets.UTF_8);
		byte[] prefix = Arrays.copyOf(id, id.length + 1);
		prefix[id.length] = separator;
		return prefix;
	}

	private static byte[] hintKey(Node peer, byte[] key) {
		byte[] prefix = prefix(peer, (byte) 0);
		byte[] hintKey = Arrays.copyOf(prefix, prefix.length + key.length);
		System.arraycopy(key, 0, hintKey, prefix.length, key.length);
		return hintKey;
	}

	private static byte[] encode(Entry entry) {
		byte[] value = entry.value();
		if (value == null) {
			return new byte[] { TOMBSTONE };
		}
		if (entry.expires()) {
			return ByteBuffer.allocate(1 + Long.BYTES + value.length)
				.put(EXPIRING)
				.putLong(entry.expiresAt())
				.put(value)
				.array();
		}
		byte[] encoded = new byte[value.length + 1];
		encoded[0] = VALUE;
		System.arraycopy(value, 0, encoded, 1, value.length);
		return encoded;
	}

	private static Entry decode(byte[] key, Entry hint) {
		byte[] stored = hint.value();
		if (stored == null || stored.length == 0 || stored[0] == TOMBSTONE) {
			return Entry.tombstone(key, hint.timestamp());
		}
		if (stored[0] == EXPIRING && stored.length >= 1 + Long.BYTES) {
			return Entry.expiring(key, Arrays.copyOfRange(stored, 1 + Long.BYTES, stored.length), hint.timestamp(),
					ByteBuffer.wrap(stored, 1, Long.BYTES).getLong());
		}
		return Entry.value(key, Arrays.copyOfRange(stored, 1, stored.length), hint.timestamp());
	}

	@Override
	public void close() {
		this.storage.close();
	}

}
