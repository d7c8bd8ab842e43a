package io.quorumkv.service.replication;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.PurgePolicy;
import io.quorumkv.storage.Storage;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Writes that a replica missed, kept durably apart from the data until they are delivered
 * ({@link HintedHandoff}).
 *
 * Its layout is {@link HintFormat}'s.
 *
 *
 * The key is fixed-size whatever the data key's length, so every key the data store
 * accepts has a hint on every backend (Derby's keys end at 1,024 bytes; a peer URL plus
 * such a key did not fit). The peer's id is in the value, so that the store can count
 * each peer's hints when it opens, also for peers it was not told about (a node that
 * joined the ring, or left it: its hints then go to the key's current owners). The store
 * keeps per peer and key only the greatest missed version, by the data's own order: the
 * hint's timestamp is the entry's, and at equal timestamps the kinds compare as the
 * data's do (a tombstone, 2, beats a value, 1, or an expiring one, 0; two values by their
 * bytes, the peer id and key before them being the same). Only two writes of one key
 * stamped at the same microsecond, one of them expiring, may compare otherwise than in
 * the data (where the value bytes decide first, then the earlier expiry): the hint kept
 * may then not be the replicas' winner, and repair settles it. A hint of an expiring
 * write is delivered even after its expiry: expired, it is the tombstone that shadows the
 * replica's older versions. Delivery writes a storage tombstone at the hint's timestamp,
 * which beats that hint and no newer one, so a hint stored during delivery survives; the
 * store purges those tombstones right away ({@link PurgePolicy#ANY}: hints are never
 * replicated), so it holds little more than the pending hints. Hints of the earlier
 * layout ({@code peer id, 0x00, key}) are moved to this one when the store opens.
 */
public final class HintStore implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(HintStore.class);

	private static final Duration OPEN_TIMEOUT = Duration.ofMinutes(5);

	private final Storage storage;

	private final long maxPendingPerPeer;

	private final Map<String, AtomicLong> pending = new ConcurrentHashMap<>();

	private final Counter stored;

	private final Counter dropped;

	private final Counter purged;

	private final MeterRegistry meters;

	/**
	 * Moves hints of the earlier layout (those of {@code peers}; others are dropped),
	 * counts the stored hints of every peer (one scan at start) and keeps a gauge for
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
		this.purged = Counter.builder("quorumkv.hints.purged")
			.description("Delivered or dropped hints removed from the hint store for good")
			.register(meters);
		storage.purgePolicy(PurgePolicy.ANY);
		LegacyHints.migrate(storage, peers, this).block(OPEN_TIMEOUT);
		Map<String, Long> counts = storage.scan(new byte[] { HintFormat.FORMAT }, new byte[] { HintFormat.FORMAT + 1 })
			.filter((hint) -> !hint.isTombstone())
			.map(HintFormat::peerOf)
			.collectList()
			.blockOptional(OPEN_TIMEOUT)
			.orElse(List.of())
			.stream()
			.collect(Collectors.groupingBy((id) -> id, Collectors.counting()));
		peers.forEach((peer) -> counter(peer.id()));
		counts.forEach((id, count) -> counter(id).set(count));
		purge().block(OPEN_TIMEOUT);
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
			return store(peer.id(), entry).doOnSuccess((ignored) -> {
				count.incrementAndGet();
				this.stored.increment();
			});
		});
	}

	/** Stores the hint, whatever the limit (moving hints of the earlier layout). */
	Mono<Void> store(String peer, Entry entry) {
		return this.storage.upsert(
				Entry.value(HintFormat.hintKey(peer, entry.key()), HintFormat.encode(peer, entry), entry.timestamp()));
	}

	/** The hints of a peer, as the entries to deliver (in the order of their hashes). */
	public Flux<Entry> hints(Node peer) {
		return hints(peer.id());
	}

	/** The hints of the peer with this id, as the entries to deliver. */
	public Flux<Entry> hints(String peer) {
		byte[] prefix = HintFormat.prefix(peer);
		return this.storage.scan(prefix, HintFormat.successor(prefix))
			.filter((hint) -> !hint.isTombstone())
			.map(HintFormat::decode);
	}

	/** Marks a hint delivered (or given up); a newer hint of the same key stays. */
	public Mono<Void> remove(Node peer, Entry entry) {
		return remove(peer.id(), entry);
	}

	/** Marks a hint delivered (or given up); a newer hint of the same key stays. */
	public Mono<Void> remove(String peer, Entry entry) {
		return this.storage.upsert(Entry.tombstone(HintFormat.hintKey(peer, entry.key()), entry.timestamp()))
			.doOnSuccess((ignored) -> counter(peer).updateAndGet((n) -> Math.max(0, n - 1)));
	}

	/**
	 * Drops delivered hints for good (their tombstones); the LSM drops them in its
	 * compactions instead, the SQL backends here.
	 */
	public Mono<Long> purge() {
		return this.storage.purgeTombstones().doOnNext((count) -> this.purged.increment(count));
	}

	/**
	 * Entries the hint store holds, delivered ones not purged yet included: what its size
	 * is made of.
	 */
	public Mono<Long> footprint() {
		return this.storage.scan(new byte[] { 0 }, null).count();
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

	static Log logger() {
		return logger;
	}

	@Override
	public void close() {
		this.storage.close();
	}

}
