package io.quorumkv.service.replication;

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
 * is a flag byte (1 value, 0 data tombstone) and the value bytes. Delivery writes a
 * storage tombstone at the hint's own timestamp, which beats that hint and no newer one:
 * a hint stored during delivery survives.
 */
public final class HintStore implements AutoCloseable {

	private static final byte VALUE = 1;

	private static final byte TOMBSTONE = 0;

	private final Storage storage;

	private final long maxPendingPerPeer;

	private final Map<String, AtomicLong> pending = new ConcurrentHashMap<>();

	private final Counter stored;

	private final Counter dropped;

	private final MeterRegistry meters;

	/**
	 * Counts the stored hints of every peer (one scan at start) and keeps a gauge for
	 * each peer that has or gets hints; {@code peers} get a gauge from the start.
	 */
	public HintStore(Storage storage, List<Node> peers, long maxPendingPerPeer, MeterRegistry meters) {
		this.storage = storage;
		this.maxPendingPerPeer = maxPendingPerPeer;
		this.meters = meters;
		this.stored = Counter.builder("quorumkv.hints.stored").description("Hints stored").register(meters);
		this.dropped = Counter.builder("quorumkv.hints.dropped")
			.description("Hints not kept or not delivered: over the limit or too old")
			.register(meters);
		Map<String, Long> counts = storage.scan(new byte[0], null)
			.filter((hint) -> !hint.isTombstone())
			.map((hint) -> peerOf(hint.key()))
			.collectList()
			.blockOptional(Duration.ofMinutes(5))
			.orElse(List.of())
			.stream()
			.collect(java.util.stream.Collectors.groupingBy((id) -> id, java.util.stream.Collectors.counting()));
		peers.forEach((peer) -> counter(peer.id()));
		counts.forEach((id, count) -> counter(id).set(count));
	}

	private static String peerOf(byte[] hintKey) {
		int separator = 0;
		while (separator < hintKey.length && hintKey[separator] != 0) {
			separator++;
		}
		return new String(hintKey, 0, separator, StandardCharsets.UTF_8);
	}

	private AtomicLong counter(String peer) {
		return this.pending.computeIfAbsent(peer, (id) -> {
			AtomicLong count = new AtomicLong();
			Gauge.builder("quorumkv.hints.pending", count, AtomicLong::get)
				.description("Hints waiting for delivery")
				.tag("peer", id)
				.register(this.meters);
			return count;
		});
	}

	/** The ids of the peers that have hints waiting. */
	public List<String> peersWithHints() {
		return this.pending.entrySet().stream().filter((e) -> e.getValue().get() > 0).map(Map.Entry::getKey).toList();
	}

	/** Keeps a write that {@code peer} missed; drops it when the peer has too many. */
	public Mono<Void> add(Node peer, Entry entry) {
		return Mono.defer(() -> {
			AtomicLong count = counter(peer.id());
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
		return hints(peer.id());
	}

	/** The hints of the peer with this id in key order, as the entries to deliver. */
	public Flux<Entry> hints(String peer) {
		byte[] prefix = prefix(peer, (byte) 0);
		return this.storage.scan(prefix, prefix(peer, (byte) 1))
			.filter((hint) -> !hint.isTombstone())
			.map((hint) -> decode(Arrays.copyOfRange(hint.key(), prefix.length, hint.key().length), hint));
	}

	/** Marks a hint delivered (or given up); a newer hint of the same key stays. */
	public Mono<Void> remove(String peer, Entry entry) {
		return this.storage.upsert(Entry.tombstone(hintKey(peer, entry.key()), entry.timestamp()))
			.doOnSuccess((ignored) -> counter(peer).updateAndGet((n) -> Math.max(0, n - 1)));
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
	void recount(String peer, long remaining) {
		counter(peer).set(remaining);
	}

	private static byte[] prefix(String peer, byte separator) {
		byte[] id = peer.getBytes(StandardCharsets.UTF_8);
		byte[] prefix = Arrays.copyOf(id, id.length + 1);
		prefix[id.length] = separator;
		return prefix;
	}

	private static byte[] hintKey(Node peer, byte[] key) {
		return hintKey(peer.id(), key);
	}

	private static byte[] hintKey(String peer, byte[] key) {
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
		return Entry.value(key, Arrays.copyOfRange(stored, 1, stored.length), hint.timestamp());
	}

	@Override
	public void close() {
		this.storage.close();
	}

}
