package io.quorumkv.client;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A client of a QuorumKV cluster: reactive ({@code Mono}/{@code Flux}) over Reactor
 * Netty, with a {@linkplain #blocking() blocking facade} and a {@linkplain #async()
 * {@code CompletableFuture} facade}. One client per application is enough; it is
 * thread-safe, holds a bounded pool of keep-alive connections per node, and must be
 * {@linkplain #close() closed}.
 *
 * <pre>{@code
 * try (QuorumKvClient client = QuorumKvClient.builder()
 *         .seeds("http://127.0.0.1:8081", "http://127.0.0.1:8082", "http://127.0.0.1:8083")
 *         .build()) {
 *     client.put("user:42", "Ada".getBytes(UTF_8), Replicas.of(2, 3))
 *         .then(client.get("user:42", Replicas.of(2, 3)))
 *         .map((bytes) -> new String(bytes, UTF_8))
 *         .defaultIfEmpty("(absent)")
 *         .subscribe(System.out::println);
 *
 *     client.scan("user:", "user;")                    // [start, end) in key order
 *         .take(100)
 *         .subscribe((record) -> System.out.println(record.key()));
 * }
 * }</pre>
 *
 * <p>
 * Every method is lazy: nothing is sent until the result is subscribed, and each
 * subscription sends the request again. Keys are non-empty strings (their UTF-8 bytes are
 * the key) or the key's bytes themselves; values are exact bytes, any length up to the
 * nodes' limit. Without a {@link Replicas} the node's default applies (a majority of all
 * replicas). Failures are {@link QuorumKvException}s, one subclass per answer a caller
 * treats differently; a key that is absent is not a failure but an empty {@code Mono}.
 * Which failures are retried, and why a write is not by default, is {@link RetryPolicy}'s
 * description.
 */
public final class QuorumKvClient implements AutoCloseable {

	/**
	 * Records per page of a scan: what one page holds in memory at most is this many
	 * records (their values up to the server's body limit each).
	 */
	static final int SCAN_PAGE = 256;

	private final ClientConfig config;

	private final Transport transport;

	private final RequestRouting routing;

	private final EntityRequests entities;

	private final ConditionalWrites conditional;

	private final BlockingQuorumKvClient blocking;

	private final AsyncQuorumKvClient async;

	QuorumKvClient(ClientConfig config) {
		this.config = config;
		this.transport = new Transport(config);
		this.routing = new RequestRouting(config, this.transport);
		Attempts attempts = new Attempts(config, this.routing);
		this.entities = new EntityRequests(this.transport, attempts);
		this.conditional = new ConditionalWrites(this.transport, attempts,
				(key) -> this.entities.readVersioned(key, null));
		this.blocking = new BlockingQuorumKvClient(this);
		this.async = new AsyncQuorumKvClient(this);
	}

	/** A builder; give it at least one seed. */
	public static QuorumKvClientBuilder builder() {
		return new QuorumKvClientBuilder();
	}

	/**
	 * The value of {@code key} read from the node's default quorum; empty when absent.
	 */
	public Mono<byte[]> get(String key) {
		return read(text(key), null);
	}

	/**
	 * The value of {@code key} read from {@code replicas}; empty when absent or deleted.
	 */
	public Mono<byte[]> get(String key, Replicas replicas) {
		return read(text(key), Objects.requireNonNull(replicas, "replicas"));
	}

	/**
	 * The value of {@code key} with its version (the node's {@code ETag}), read from the
	 * node's default quorum; empty when absent.
	 *
	 * <pre>{@code
	 * client.getVersioned("user:42")
	 *     .subscribe((read) -> System.out.println(read.version() + " " + read.value().length));
	 * }</pre>
	 */
	public Mono<VersionedValue> getVersioned(String key) {
		return readVersioned(text(key), null);
	}

	/**
	 * The value of {@code key} with its version, read from {@code replicas}; empty when
	 * absent or deleted.
	 */
	public Mono<VersionedValue> getVersioned(String key, Replicas replicas) {
		return readVersioned(text(key), Objects.requireNonNull(replicas, "replicas"));
	}

	/**
	 * The value of {@code key} with its version, read serially
	 * ({@code consistency=serial}): the node first completes any conditional write of the
	 * key in progress, so the read is linearizable with {@link #putIf},
	 * {@link #putIfAbsent}, {@link #deleteIf} and {@link #update}; empty when absent. It
	 * costs a round of Paxos among a majority of the key's replicas.
	 */
	public Mono<VersionedValue> getSerial(String key) {
		return this.entities.readSerial(text(key));
	}

	/** Stores {@code value} under {@code key} with the node's default quorum. */
	public Mono<Void> put(String key, byte[] value) {
		return write(Operation.PUT, text(key), copy(value), null, null);
	}

	/**
	 * Stores {@code value} (copied when called) under {@code key}; completes when
	 * {@code replicas.ack()} replicas confirmed.
	 */
	public Mono<Void> put(String key, byte[] value, Replicas replicas) {
		return write(Operation.PUT, text(key), copy(value), Objects.requireNonNull(replicas, "replicas"), null);
	}

	/**
	 * Stores {@code value} under {@code key} with the node's default quorum; it expires
	 * {@code ttl} after the write (whole seconds, 1 s to 10 years), then reads as absent.
	 * A later write replaces the expiry with its own (none for a write without one).
	 * <pre>{@code
	 * client.put("session:42", token, Duration.ofMinutes(30)).block();
	 * }</pre>
	 * @throws IllegalArgumentException for a {@code ttl} out of range or not whole
	 * seconds
	 */
	public Mono<Void> put(String key, byte[] value, Duration ttl) {
		return write(Operation.PUT, text(key), copy(value), null, Objects.requireNonNull(ttl, "ttl"));
	}

	/**
	 * {@link #put(String, byte[], Duration)} confirmed by {@code replicas.ack()}
	 * replicas.
	 */
	public Mono<Void> put(String key, byte[] value, Duration ttl, Replicas replicas) {
		return write(Operation.PUT, text(key), copy(value), Objects.requireNonNull(replicas, "replicas"),
				Objects.requireNonNull(ttl, "ttl"));
	}

	/**
	 * Deletes {@code key} with the node's default quorum (deleting an absent key
	 * succeeds).
	 */
	public Mono<Void> delete(String key) {
		return write(Operation.DELETE, text(key), null, null, null);
	}

	/** Deletes {@code key}; completes when {@code replicas.ack()} replicas confirmed. */
	public Mono<Void> delete(String key, Replicas replicas) {
		return write(Operation.DELETE, text(key), null, Objects.requireNonNull(replicas, "replicas"), null);
	}

	/**
	 * Stores {@code value} under {@code key} only if the key's current version is
	 * {@code version} (as {@link #getVersioned} read it): {@code PUT} with
	 * {@code If-Match}. Conditional writes are linearizable per key (the nodes agree on
	 * them by Paxos among the key's replicas); a 412 is not an error but a result that
	 * did not hold, with the current version.
	 *
	 * <pre>{@code
	 * client.getVersioned("user:42")
	 *     .flatMap((read) -> client.putIf("user:42", rename(read.value()), read.version()))
	 *     .subscribe((result) -> System.out.println(result.held() ? "renamed" : "changed meanwhile"));
	 * }</pre>
	 * @throws IllegalArgumentException for a version that is not positive
	 */
	public Mono<ConditionResult> putIf(String key, byte[] value, long version) {
		return this.conditional.putIf(text(key), copy(value), version);
	}

	/**
	 * Stores {@code value} under {@code key} only if the key is absent (deleted or
	 * expired counts as absent): {@code PUT} with {@code If-None-Match: *}.
	 */
	public Mono<ConditionResult> putIfAbsent(String key, byte[] value) {
		return this.conditional.putIfAbsent(text(key), copy(value));
	}

	/**
	 * Deletes {@code key} only if its current version is {@code version}: {@code DELETE}
	 * with {@code If-Match}.
	 * @throws IllegalArgumentException for a version that is not positive
	 */
	public Mono<ConditionResult> deleteIf(String key, long version) {
		return this.conditional.deleteIf(text(key), version);
	}

	/**
	 * Changes {@code key}'s value atomically: reads it with its version, applies
	 * {@code change} (to the value, empty when absent; it returns the new value), and
	 * writes the result with {@link #putIf} ({@link #putIfAbsent} when it was absent);
	 * when another writer changed the key in between (412), starts again after a
	 * jittered, growing wait, as {@link UpdatePolicy#DEFAULT} allows. Emits the value
	 * written. {@code change} may run several times, on a client I/O thread: keep it
	 * quick, free of side effects and blocking.
	 *
	 * <pre>{@code
	 * client.update("visits", (current) -> increment(current.orElse(ZERO))).block();
	 * }</pre>
	 * @throws UpdateConflictException (in the {@code Mono}) when every round lost
	 */
	public Mono<byte[]> update(String key, Function<Optional<byte[]>, byte[]> change) {
		return update(key, change, UpdatePolicy.DEFAULT);
	}

	/**
	 * {@link #update(String, Function)} with its rounds and waits set by {@code policy}.
	 */
	public Mono<byte[]> update(String key, Function<Optional<byte[]>, byte[]> change, UpdatePolicy policy) {
		return this.conditional.update(text(key), Objects.requireNonNull(change, "change"),
				Objects.requireNonNull(policy, "policy"));
	}

	// Keys as bytes: the same requests, the key given as the exact bytes the node keys
	// by (what a String key's UTF-8 encoding gives). They are percent-encoded as they
	// are; the nodes take only keys that are valid UTF-8 (docs/api.md, "Keys") and
	// refuse others with a 400, a BadRequestException.

	/** {@link #get(String)} of the key with these bytes (copied when called). */
	public Mono<byte[]> get(byte[] key) {
		return read(bytes(key), null);
	}

	/** {@link #get(String, Replicas)} of the key with these bytes. */
	public Mono<byte[]> get(byte[] key, Replicas replicas) {
		return read(bytes(key), Objects.requireNonNull(replicas, "replicas"));
	}

	/** {@link #getVersioned(String)} of the key with these bytes. */
	public Mono<VersionedValue> getVersioned(byte[] key) {
		return readVersioned(bytes(key), null);
	}

	/** {@link #getVersioned(String, Replicas)} of the key with these bytes. */
	public Mono<VersionedValue> getVersioned(byte[] key, Replicas replicas) {
		return readVersioned(bytes(key), Objects.requireNonNull(replicas, "replicas"));
	}

	/** {@link #getSerial(String)} of the key with these bytes. */
	public Mono<VersionedValue> getSerial(byte[] key) {
		return this.entities.readSerial(bytes(key));
	}

	/** {@link #put(String, byte[])} under the key with these bytes. */
	public Mono<Void> put(byte[] key, byte[] value) {
		return write(Operation.PUT, bytes(key), copy(value), null, null);
	}

	/** {@link #put(String, byte[], Replicas)} under the key with these bytes. */
	public Mono<Void> put(byte[] key, byte[] value, Replicas replicas) {
		return write(Operation.PUT, bytes(key), copy(value), Objects.requireNonNull(replicas, "replicas"), null);
	}

	/** {@link #put(String, byte[], Duration)} under the key with these bytes. */
	public Mono<Void> put(byte[] key, byte[] value, Duration ttl) {
		return write(Operation.PUT, bytes(key), copy(value), null, Objects.requireNonNull(ttl, "ttl"));
	}

	/**
	 * {@link #put(String, byte[], Duration, Replicas)} under the key with these bytes.
	 */
	public Mono<Void> put(byte[] key, byte[] value, Duration ttl, Replicas replicas) {
		return write(Operation.PUT, bytes(key), copy(value), Objects.requireNonNull(replicas, "replicas"),
				Objects.requireNonNull(ttl, "ttl"));
	}

	/** {@link #delete(String)} of the key with these bytes. */
	public Mono<Void> delete(byte[] key) {
		return write(Operation.DELETE, bytes(key), null, null, null);
	}

	/** {@link #delete(String, Replicas)} of the key with these bytes. */
	public Mono<Void> delete(byte[] key, Replicas replicas) {
		return write(Operation.DELETE, bytes(key), null, Objects.requireNonNull(replicas, "replicas"), null);
	}

	/** {@link #putIf(String, byte[], long)} under the key with these bytes. */
	public Mono<ConditionResult> putIf(byte[] key, byte[] value, long version) {
		return this.conditional.putIf(bytes(key), copy(value), version);
	}

	/** {@link #putIfAbsent(String, byte[])} under the key with these bytes. */
	public Mono<ConditionResult> putIfAbsent(byte[] key, byte[] value) {
		return this.conditional.putIfAbsent(bytes(key), copy(value));
	}

	/** {@link #deleteIf(String, long)} of the key with these bytes. */
	public Mono<ConditionResult> deleteIf(byte[] key, long version) {
		return this.conditional.deleteIf(bytes(key), version);
	}

	/** {@link #update(String, Function)} of the key with these bytes. */
	public Mono<byte[]> update(byte[] key, Function<Optional<byte[]>, byte[]> change) {
		return update(key, change, UpdatePolicy.DEFAULT);
	}

	/** {@link #update(String, Function, UpdatePolicy)} of the key with these bytes. */
	public Mono<byte[]> update(byte[] key, Function<Optional<byte[]>, byte[]> change, UpdatePolicy policy) {
		return this.conditional.update(bytes(key), Objects.requireNonNull(change, "change"),
				Objects.requireNonNull(policy, "policy"));
	}

	/**
	 * The live records with {@code start <= key < end} in key order (unsigned UTF-8
	 * bytes, that is code-point order), read page by page as the subscriber requests them
	 * ({@link #SCAN_PAGE} records a page, each resumed after the last key of the one
	 * before), so a range of any size never sits in memory. Cancel (for example with
	 * {@code take(n)}) to stop early. A page that fails is retried like a read, from
	 * where the scan stands: records are never repeated or skipped.
	 * @param start the first key, inclusive
	 * @param end the end, exclusive; null for the end of the key space
	 */
	public Flux<KeyValue> scan(String start, @Nullable String end) {
		return scan(start, end, Long.MAX_VALUE);
	}

	/**
	 * At most {@code limit} live records with {@code start <= key < end} in key order,
	 * read page by page as {@link #scan(String, String)} does, but no page asks for more
	 * records than are still wanted: a short scan costs the nodes no more than it
	 * returns, where {@code scan(start, end).take(limit)} asks for whole pages.
	 * @param start the first key, inclusive
	 * @param end the end, exclusive; null for the end of the key space
	 * @param limit the most records emitted, at least 1
	 */
	public Flux<KeyValue> scan(String start, @Nullable String end, long limit) {
		if (limit < 1) {
			throw new IllegalArgumentException("limit must be at least 1, not " + limit);
		}
		byte[] from = Requests.utf8("start", start);
		byte[] to = (end != null) ? Requests.utf8("end", end) : null;
		return this.entities.page(from, true, to, limit)
			.expand((page) -> (page.full() && page.left() > 0)
					? this.entities.page(page.last().key().getBytes(StandardCharsets.UTF_8), false, to, page.left())
					: Mono.empty())
			.concatMapIterable(EntityRequests.Page::records);
	}

	/** The same client with blocking methods, for code that is not reactive. */
	public BlockingQuorumKvClient blocking() {
		return this.blocking;
	}

	/**
	 * The same client with methods that return {@code CompletableFuture}s, for code that
	 * does not use Reactor and must not block.
	 */
	public AsyncQuorumKvClient async() {
		return this.async;
	}

	/** The nodes this client was given. */
	public List<URI> seeds() {
		return this.config.seeds();
	}

	/**
	 * How the requests were routed so far: how many went to a replica of their key, how
	 * many to another node, and the ring's epoch ({@link RoutingStats}).
	 */
	public RoutingStats routingStats() {
		return this.routing.stats();
	}

	/** Closes every connection and stops the client's event loops; waits up to 5 s. */
	@Override
	public void close() {
		this.routing.close();
		this.transport.close();
	}

	private static byte[] text(String key) {
		return Requests.utf8("key", key);
	}

	private static byte[] bytes(byte[] key) {
		return Requests.key(key);
	}

	private static byte[] copy(byte[] value) {
		return Objects.requireNonNull(value, "value").clone();
	}

	private Mono<byte[]> read(byte[] key, @Nullable Replicas replicas) {
		return this.entities.read(key, replicas);
	}

	private Mono<VersionedValue> readVersioned(byte[] key, @Nullable Replicas replicas) {
		return this.entities.readVersioned(key, replicas);
	}

	private Mono<Void> write(Operation operation, byte[] key, byte @Nullable [] value, @Nullable Replicas replicas,
			@Nullable Duration ttl) {
		return this.entities.write(operation, key, value, replicas, ttl);
	}

}
