package io.quorumkv.service.replication;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import com.dynatrace.hash4j.hashing.Hashing;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.PurgePolicy;
import io.quorumkv.storage.Storage;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Writes that a replica missed, kept durably apart from the data until they are delivered
 * ({@link HintedHandoff}).
 *
 * <pre>
 * hint key   := 0x00 | u64 XXH3-64(peer id) | SHA-256(key)            (41 bytes)
 * hint value := u8 kind (1 value, 2 tombstone) | u32 keyLength | key | value bytes
 * </pre>
 *
 * The key is fixed-size whatever the data key's length, so every key the data store
 * accepts has a hint on every backend (Derby's keys end at 1,024 bytes; a peer URL plus
 * such a key did not fit). The store keeps per peer and key only the greatest missed
 * version, by the data's own order: the hint's timestamp is the entry's, and at equal
 * timestamps the kinds compare as the data's do (a tombstone, 2, beats a value, 1; two
 * values by their bytes). Delivery writes a storage tombstone at the hint's timestamp,
 * which beats that hint and no newer one, so a hint stored during delivery survives; the
 * store purges those tombstones right away ({@link PurgePolicy#ANY}: hints are never
 * replicated), so it holds little more than the pending hints. Hints of the earlier
 * layout ({@code peer id, 0x00, key}) are moved to this one when the store opens.
 */
public final class HintStore implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(HintStore.class);

	static final byte FORMAT = 0x00;

	private static final byte VALUE = 1;

	private static final byte TOMBSTONE = 2;

	private static final int PREFIX = 1 + Long.BYTES;

	private static final Duration OPEN_TIMEOUT = Duration.ofMinutes(5);

	private final Storage storage;

	private final long maxPendingPerPeer;

	private final Map<String, AtomicLong> pending = new ConcurrentHashMap<>();

	private final Counter stored;

	private final Counter dropped;

	private final Counter purged;

	public HintStore(Storage storage, List<Node> peers, long maxPendingPerPeer, MeterRegistry meters) {
		this.storage = storage;
		this.maxPendingPerPeer = maxPendingPerPeer;
		this.stored = Counter.builder("quorumkv.hints.stored").description("Hints stored").register(meters);
		this.dropped = Counter.builder("quorumkv.hints.dropped")
			.description("Hints not kept or not delivered: over the limit or too old")
			.register(meters);
		this.purged = Counter.builder("quorumkv.hints.purged")
			.description("Delivered or dropped hints removed from the hint store for good")
			.register(meters);
		storage.purgePolicy(PurgePolicy.ANY);
		LegacyHints.migrate(storage, peers, this).block(OPEN_TIMEOUT);
		for (Node peer : peers) {
			AtomicLong count = new AtomicLong(hints(peer).count().blockOptional(OPEN_TIMEOUT).orElse(0L));
			this.pending.put(peer.id(), count);
			Gauge.builder("quorumkv.hints.pending", count, AtomicLong::get)
				.description("Hints waiting for delivery")
				.tag("peer", peer.id())
				.register(meters);
		}
		purge().block(OPEN_TIMEOUT);
	}

	/** Keeps a write that {@code peer} missed; drops it when the peer has too many. */
	public Mono<Void> add(Node peer, Entry entry) {
		return Mono.defer(() -> {
			AtomicLong count = this.pending.computeIfAbsent(peer.id(), (id) -> new AtomicLong());
			if (count.get() >= this.maxPendingPerPeer) {
				this.dropped.increment();
				return Mono.empty();
			}
			return store(peer, entry).doOnSuccess((ignored) -> {
				count.incrementAndGet();
				this.stored.increment();
			});
		});
	}

	/** Stores the hint, whatever the limit (moving hints of the earlier layout). */
	Mono<Void> store(Node peer, Entry entry) {
		return this.storage.upsert(Entry.value(hintKey(peer, entry.key()), encode(entry), entry.timestamp()));
	}

	/** The hints of a peer, as the entries to deliver (in the order of their hashes). */
	public Flux<Entry> hints(Node peer) {
		byte[] prefix = prefix(peer);
		return this.storage.scan(prefix, successor(prefix))
			.filter((hint) -> !hint.isTombstone())
			.map(HintStore::decode);
	}

	/** Marks a hint delivered (or given up); a newer hint of the same key stays. */
	public Mono<Void> remove(Node peer, Entry entry) {
		return this.storage.upsert(Entry.tombstone(hintKey(peer, entry.key()), entry.timestamp()))
			.doOnSuccess((ignored) -> this.pending.computeIfAbsent(peer.id(), (id) -> new AtomicLong())
				.updateAndGet((n) -> Math.max(0, n - 1)));
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
	void recount(Node peer, long remaining) {
		this.pending.computeIfAbsent(peer.id(), (id) -> new AtomicLong()).set(remaining);
	}

	private static byte[] prefix(Node peer) {
		return ByteBuffer.allocate(PREFIX)
			.put(FORMAT)
			.putLong(Hashing.xxh3_64().hashBytesToLong(peer.id().getBytes(StandardCharsets.UTF_8)))
			.array();
	}

	/** The least key greater than every key starting with {@code prefix}, or null. */
	private static byte @Nullable [] successor(byte[] prefix) {
		byte[] next = prefix.clone();
		for (int i = next.length - 1; i >= 0; i--) {
			if (next[i] != (byte) 0xFF) {
				next[i]++;
				return Arrays.copyOf(next, i + 1);
			}
		}
		return null;
	}

	static byte[] hintKey(Node peer, byte[] key) {
		byte[] digest = sha256(key);
		return ByteBuffer.allocate(PREFIX + digest.length).put(prefix(peer)).put(digest).array();
	}

	private static byte[] sha256(byte[] key) {
		try {
			return MessageDigest.getInstance("SHA-256").digest(key);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("every JVM has SHA-256", ex);
		}
	}

	private static byte[] encode(Entry entry) {
		byte[] key = entry.key();
		byte[] value = entry.value();
		ByteBuffer out = ByteBuffer.allocate(1 + 4 + key.length + ((value != null) ? value.length : 0));
		out.put((value != null) ? VALUE : TOMBSTONE).putInt(key.length).put(key);
		if (value != null) {
			out.put(value);
		}
		return out.array();
	}

	private static Entry decode(Entry hint) {
		byte[] stored = hint.value();
		ByteBuffer in = ByteBuffer.wrap((stored != null) ? stored : new byte[0]);
		if (in.remaining() < 5) {
			throw new IllegalStateException("hint of " + in.remaining() + " bytes is damaged");
		}
		byte kind = in.get();
		int keyLength = in.getInt();
		if (keyLength < 1 || keyLength > in.remaining() || (kind != VALUE && kind != TOMBSTONE)) {
			throw new IllegalStateException("hint with kind " + kind + " and key length " + keyLength + " is damaged");
		}
		byte[] key = new byte[keyLength];
		in.get(key);
		if (kind == TOMBSTONE) {
			return Entry.tombstone(key, hint.timestamp());
		}
		byte[] value = new byte[in.remaining()];
		in.get(value);
		return Entry.value(key, value, hint.timestamp());
	}

	static Log logger() {
		return logger;
	}

	@Override
	public void close() {
		this.storage.close();
	}

}
