package io.quorumkv.client;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The {@link CompletableFuture} face of a {@link QuorumKvClient} (from
 * {@link QuorumKvClient#async()}), for code that does not use Reactor: the same requests,
 * retries and exceptions, each started when the method is called.
 *
 * <pre>{@code
 * AsyncQuorumKvClient kv = client.async();
 * kv.put("greeting", "hello".getBytes(UTF_8))
 *     .thenCompose((done) -> kv.get("greeting"))
 *     .thenAccept((value) -> System.out.println(value.map(String::new).orElse("(absent)")))
 *     .join();
 * }</pre>
 *
 * <ul>
 * <li>A future fails with the {@link QuorumKvException} of the request ({@code join()}
 * wraps it in a {@code CompletionException}, {@code get()} in an
 * {@code ExecutionException}).</li>
 * <li>Cancelling a future cancels its request: no further attempt is made, but a write
 * already sent may have been applied.</li>
 * <li>A future completes on one of the client's I/O threads, so a dependent stage without
 * an executor runs there: never block in it (no {@code join()}, no blocking I/O); give
 * blocking work its own executor ({@code thenApplyAsync(fn, executor)}).</li>
 * </ul>
 */
public final class AsyncQuorumKvClient {

	private final QuorumKvClient client;

	AsyncQuorumKvClient(QuorumKvClient client) {
		this.client = client;
	}

	/**
	 * The value of {@code key}, empty when absent; see
	 * {@link QuorumKvClient#get(String)}.
	 */
	public CompletableFuture<Optional<byte[]>> get(String key) {
		return optional(this.client.get(key));
	}

	/** The value of {@code key} read from {@code replicas}, empty when absent. */
	public CompletableFuture<Optional<byte[]>> get(String key, Replicas replicas) {
		return optional(this.client.get(key, replicas));
	}

	/**
	 * The value of {@code key} with its version, empty when absent; see
	 * {@link QuorumKvClient#getVersioned(String)}.
	 */
	public CompletableFuture<Optional<VersionedValue>> getVersioned(String key) {
		return optional(this.client.getVersioned(key));
	}

	/** The value of {@code key} with its version read from {@code replicas}. */
	public CompletableFuture<Optional<VersionedValue>> getVersioned(String key, Replicas replicas) {
		return optional(this.client.getVersioned(key, replicas));
	}

	/** Stores {@code value} under {@code key} with the node's default quorum. */
	public CompletableFuture<Void> put(String key, byte[] value) {
		return this.client.put(key, value).toFuture();
	}

	/**
	 * Stores {@code value} under {@code key}, confirmed by {@code replicas.ack()}
	 * replicas.
	 */
	public CompletableFuture<Void> put(String key, byte[] value, Replicas replicas) {
		return this.client.put(key, value, replicas).toFuture();
	}

	/**
	 * Stores {@code value} under {@code key}, expiring {@code ttl} after the write (see
	 * {@link QuorumKvClient#put(String, byte[], Duration)}).
	 */
	public CompletableFuture<Void> put(String key, byte[] value, Duration ttl) {
		return this.client.put(key, value, ttl).toFuture();
	}

	/**
	 * Stores {@code value} under {@code key}, expiring {@code ttl} after the write,
	 * confirmed by {@code replicas.ack()} replicas.
	 */
	public CompletableFuture<Void> put(String key, byte[] value, Duration ttl, Replicas replicas) {
		return this.client.put(key, value, ttl, replicas).toFuture();
	}

	/** Deletes {@code key} with the node's default quorum. */
	public CompletableFuture<Void> delete(String key) {
		return this.client.delete(key).toFuture();
	}

	/** Deletes {@code key}, confirmed by {@code replicas.ack()} replicas. */
	public CompletableFuture<Void> delete(String key, Replicas replicas) {
		return this.client.delete(key, replicas).toFuture();
	}

	// Keys as bytes (QuorumKvClient#get(byte[])): the same requests, the key given as
	// its exact bytes.

	/** {@link #get(String)} of the key with these bytes. */
	public CompletableFuture<Optional<byte[]>> get(byte[] key) {
		return optional(this.client.get(key));
	}

	/** {@link #get(String, Replicas)} of the key with these bytes. */
	public CompletableFuture<Optional<byte[]>> get(byte[] key, Replicas replicas) {
		return optional(this.client.get(key, replicas));
	}

	/** {@link #getVersioned(String)} of the key with these bytes. */
	public CompletableFuture<Optional<VersionedValue>> getVersioned(byte[] key) {
		return optional(this.client.getVersioned(key));
	}

	/** {@link #getVersioned(String, Replicas)} of the key with these bytes. */
	public CompletableFuture<Optional<VersionedValue>> getVersioned(byte[] key, Replicas replicas) {
		return optional(this.client.getVersioned(key, replicas));
	}

	/** {@link #put(String, byte[])} under the key with these bytes. */
	public CompletableFuture<Void> put(byte[] key, byte[] value) {
		return this.client.put(key, value).toFuture();
	}

	/** {@link #put(String, byte[], Replicas)} under the key with these bytes. */
	public CompletableFuture<Void> put(byte[] key, byte[] value, Replicas replicas) {
		return this.client.put(key, value, replicas).toFuture();
	}

	/** {@link #put(String, byte[], Duration)} under the key with these bytes. */
	public CompletableFuture<Void> put(byte[] key, byte[] value, Duration ttl) {
		return this.client.put(key, value, ttl).toFuture();
	}

	/**
	 * {@link #put(String, byte[], Duration, Replicas)} under the key with these bytes.
	 */
	public CompletableFuture<Void> put(byte[] key, byte[] value, Duration ttl, Replicas replicas) {
		return this.client.put(key, value, ttl, replicas).toFuture();
	}

	/** {@link #delete(String)} of the key with these bytes. */
	public CompletableFuture<Void> delete(byte[] key) {
		return this.client.delete(key).toFuture();
	}

	/** {@link #delete(String, Replicas)} of the key with these bytes. */
	public CompletableFuture<Void> delete(byte[] key, Replicas replicas) {
		return this.client.delete(key, replicas).toFuture();
	}

	/**
	 * Stores {@code value} under {@code key} only if its version is {@code version}; see
	 * {@link QuorumKvClient#putIf(String, byte[], long)}.
	 */
	public CompletableFuture<ConditionResult> putIf(String key, byte[] value, long version) {
		return this.client.putIf(key, value, version).toFuture();
	}

	/**
	 * Stores {@code value} under {@code key} only if the key is absent; see
	 * {@link QuorumKvClient#putIfAbsent(String, byte[])}.
	 */
	public CompletableFuture<ConditionResult> putIfAbsent(String key, byte[] value) {
		return this.client.putIfAbsent(key, value).toFuture();
	}

	/**
	 * Deletes {@code key} only if its version is {@code version}; see
	 * {@link QuorumKvClient#deleteIf(String, long)}.
	 */
	public CompletableFuture<ConditionResult> deleteIf(String key, long version) {
		return this.client.deleteIf(key, version).toFuture();
	}

	/**
	 * Changes {@code key}'s value atomically; completes with the value written (see
	 * {@link QuorumKvClient#update(String, Function)}).
	 */
	public CompletableFuture<byte[]> update(String key, Function<Optional<byte[]>, byte[]> change) {
		return this.client.update(key, change).toFuture();
	}

	/**
	 * {@link #update(String, Function)} with its rounds and waits set by {@code policy}.
	 */
	public CompletableFuture<byte[]> update(String key, Function<Optional<byte[]>, byte[]> change,
			UpdatePolicy policy) {
		return this.client.update(key, change, policy).toFuture();
	}

	/**
	 * At most {@code limit} records of {@code [start, end)} in key order, in one list (a
	 * scan larger than memory is the reactive {@link QuorumKvClient#scan}'s).
	 * @param end exclusive; null for the end of the key space
	 * @param limit the most records, at least 1
	 */
	public CompletableFuture<List<KeyValue>> scan(String start, @Nullable String end, int limit) {
		return this.client.scan(start, end, limit).collectList().toFuture();
	}

	private static <T> CompletableFuture<Optional<T>> optional(Mono<T> value) {
		return value.map(Optional::of).defaultIfEmpty(Optional.empty()).toFuture();
	}

	/**
	 * The value of {@code key} with its version, read serially; see
	 * {@link QuorumKvClient#getSerial(String)}.
	 */
	public CompletableFuture<Optional<VersionedValue>> getSerial(String key) {
		return optional(this.client.getSerial(key));
	}

	/** {@link #getSerial(String)} of the key with these bytes. */
	public CompletableFuture<Optional<VersionedValue>> getSerial(byte[] key) {
		return optional(this.client.getSerial(key));
	}

	/** {@link #putIf(String, byte[], long)} under the key with these bytes. */
	public CompletableFuture<ConditionResult> putIf(byte[] key, byte[] value, long version) {
		return this.client.putIf(key, value, version).toFuture();
	}

	/** {@link #putIfAbsent(String, byte[])} under the key with these bytes. */
	public CompletableFuture<ConditionResult> putIfAbsent(byte[] key, byte[] value) {
		return this.client.putIfAbsent(key, value).toFuture();
	}

	/** {@link #deleteIf(String, long)} of the key with these bytes. */
	public CompletableFuture<ConditionResult> deleteIf(byte[] key, long version) {
		return this.client.deleteIf(key, version).toFuture();
	}

	/** {@link #update(String, Function)} of the key with these bytes. */
	public CompletableFuture<byte[]> update(byte[] key, Function<Optional<byte[]>, byte[]> change) {
		return this.client.update(key, change).toFuture();
	}

	/** {@link #update(String, Function, UpdatePolicy)} of the key with these bytes. */
	public CompletableFuture<byte[]> update(byte[] key, Function<Optional<byte[]>, byte[]> change,
			UpdatePolicy policy) {
		return this.client.update(key, change, policy).toFuture();
	}

}
