package io.quorumkv.client;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * The blocking face of a {@link QuorumKvClient} (from {@link QuorumKvClient#blocking()}):
 * the same requests, retries and exceptions, waited for on the calling thread. Every call
 * ends within the client's timeouts times its attempts. Do not call it on an event-loop
 * thread (Reactor refuses to block one).
 *
 * <pre>{@code
 * BlockingQuorumKvClient kv = client.blocking();
 * kv.put("greeting", "hello".getBytes(UTF_8));
 * Optional<byte[]> value = kv.get("greeting", Replicas.of(2, 3));
 * kv.delete("greeting");
 * try (Stream<KeyValue> records = kv.stream("a", "n")) {
 *     records.forEach((record) -> System.out.println(record.key()));
 * }
 * }</pre>
 */
public final class BlockingQuorumKvClient {

	/** Records fetched ahead of the consumer of {@link #stream}. */
	private static final int STREAM_PREFETCH = 256;

	private final QuorumKvClient client;

	BlockingQuorumKvClient(QuorumKvClient client) {
		this.client = client;
	}

	/**
	 * The value of {@code key}, empty when absent; see
	 * {@link QuorumKvClient#get(String)}.
	 */
	public Optional<byte[]> get(String key) {
		return this.client.get(key).blockOptional();
	}

	/** The value of {@code key} read from {@code replicas}, empty when absent. */
	public Optional<byte[]> get(String key, Replicas replicas) {
		return this.client.get(key, replicas).blockOptional();
	}

	/**
	 * The value of {@code key} with its version, empty when absent; see
	 * {@link QuorumKvClient#getVersioned(String)}.
	 */
	public Optional<VersionedValue> getVersioned(String key) {
		return this.client.getVersioned(key).blockOptional();
	}

	/** The value of {@code key} with its version read from {@code replicas}. */
	public Optional<VersionedValue> getVersioned(String key, Replicas replicas) {
		return this.client.getVersioned(key, replicas).blockOptional();
	}

	/** Stores {@code value} under {@code key} with the node's default quorum. */
	public void put(String key, byte[] value) {
		this.client.put(key, value).block();
	}

	/**
	 * Stores {@code value} under {@code key}, confirmed by {@code replicas.ack()}
	 * replicas.
	 */
	public void put(String key, byte[] value, Replicas replicas) {
		this.client.put(key, value, replicas).block();
	}

	/**
	 * Stores {@code value} under {@code key}, expiring {@code ttl} after the write (see
	 * {@link QuorumKvClient#put(String, byte[], Duration)}).
	 */
	public void put(String key, byte[] value, Duration ttl) {
		this.client.put(key, value, ttl).block();
	}

	/**
	 * Stores {@code value} under {@code key}, expiring {@code ttl} after the write,
	 * confirmed by {@code replicas.ack()} replicas.
	 */
	public void put(String key, byte[] value, Duration ttl, Replicas replicas) {
		this.client.put(key, value, ttl, replicas).block();
	}

	/** Deletes {@code key} with the node's default quorum. */
	public void delete(String key) {
		this.client.delete(key).block();
	}

	/** Deletes {@code key}, confirmed by {@code replicas.ack()} replicas. */
	public void delete(String key, Replicas replicas) {
		this.client.delete(key, replicas).block();
	}

	// Keys as bytes (QuorumKvClient#get(byte[])): the same requests, the key given as
	// its exact bytes.

	/** {@link #get(String)} of the key with these bytes. */
	public Optional<byte[]> get(byte[] key) {
		return this.client.get(key).blockOptional();
	}

	/** {@link #get(String, Replicas)} of the key with these bytes. */
	public Optional<byte[]> get(byte[] key, Replicas replicas) {
		return this.client.get(key, replicas).blockOptional();
	}

	/** {@link #getVersioned(String)} of the key with these bytes. */
	public Optional<VersionedValue> getVersioned(byte[] key) {
		return this.client.getVersioned(key).blockOptional();
	}

	/** {@link #getVersioned(String, Replicas)} of the key with these bytes. */
	public Optional<VersionedValue> getVersioned(byte[] key, Replicas replicas) {
		return this.client.getVersioned(key, replicas).blockOptional();
	}

	/** {@link #put(String, byte[])} under the key with these bytes. */
	public void put(byte[] key, byte[] value) {
		this.client.put(key, value).block();
	}

	/** {@link #put(String, byte[], Replicas)} under the key with these bytes. */
	public void put(byte[] key, byte[] value, Replicas replicas) {
		this.client.put(key, value, replicas).block();
	}

	/** {@link #put(String, byte[], Duration)} under the key with these bytes. */
	public void put(byte[] key, byte[] value, Duration ttl) {
		this.client.put(key, value, ttl).block();
	}

	/**
	 * {@link #put(String, byte[], Duration, Replicas)} under the key with these bytes.
	 */
	public void put(byte[] key, byte[] value, Duration ttl, Replicas replicas) {
		this.client.put(key, value, ttl, replicas).block();
	}

	/** {@link #delete(String)} of the key with these bytes. */
	public void delete(byte[] key) {
		this.client.delete(key).block();
	}

	/** {@link #delete(String, Replicas)} of the key with these bytes. */
	public void delete(byte[] key, Replicas replicas) {
		this.client.delete(key, replicas).block();
	}

	/**
	 * At most {@code limit} records of {@code [start, end)} in key order, in one list.
	 * @param end exclusive; null for the end of the key space
	 */
	public List<KeyValue> scan(String start, @Nullable String end, int limit) {
		if (limit < 0) {
			throw new IllegalArgumentException("limit must not be negative, not " + limit);
		}
		// Pages of no more than the limit; a limit of 0 sends nothing.
		List<KeyValue> records = this.client.scan(start, end, Math.max(limit, 1))
			.take(limit, true)
			.collectList()
			.block();
		return (records != null) ? records : List.of();
	}

	/**
	 * Stores {@code value} under {@code key} only if its version is {@code version}; see
	 * {@link QuorumKvClient#putIf(String, byte[], long)}.
	 */
	public ConditionResult putIf(String key, byte[] value, long version) {
		return answered(this.client.putIf(key, value, version).block());
	}

	/**
	 * Stores {@code value} under {@code key} only if the key is absent; see
	 * {@link QuorumKvClient#putIfAbsent(String, byte[])}.
	 */
	public ConditionResult putIfAbsent(String key, byte[] value) {
		return answered(this.client.putIfAbsent(key, value).block());
	}

	/**
	 * Deletes {@code key} only if its version is {@code version}; see
	 * {@link QuorumKvClient#deleteIf(String, long)}.
	 */
	public ConditionResult deleteIf(String key, long version) {
		return answered(this.client.deleteIf(key, version).block());
	}

	/**
	 * Changes {@code key}'s value atomically and returns the value written; see
	 * {@link QuorumKvClient#update(String, Function)} ({@code change} runs on a client
	 * I/O thread, not the caller's).
	 */
	public byte[] update(String key, Function<Optional<byte[]>, byte[]> change) {
		return answered(this.client.update(key, change).block());
	}

	/**
	 * {@link #update(String, Function)} with its rounds and waits set by {@code policy}.
	 */
	public byte[] update(String key, Function<Optional<byte[]>, byte[]> change, UpdatePolicy policy) {
		return answered(this.client.update(key, change, policy).block());
	}

	/**
	 * The value of {@code key} with its version, read serially; see
	 * {@link QuorumKvClient#getSerial(String)}.
	 */
	public Optional<VersionedValue> getSerial(String key) {
		return this.client.getSerial(key).blockOptional();
	}

	/** {@link #getSerial(String)} of the key with these bytes. */
	public Optional<VersionedValue> getSerial(byte[] key) {
		return this.client.getSerial(key).blockOptional();
	}

	/** {@link #putIf(String, byte[], long)} under the key with these bytes. */
	public ConditionResult putIf(byte[] key, byte[] value, long version) {
		return answered(this.client.putIf(key, value, version).block());
	}

	/** {@link #putIfAbsent(String, byte[])} under the key with these bytes. */
	public ConditionResult putIfAbsent(byte[] key, byte[] value) {
		return answered(this.client.putIfAbsent(key, value).block());
	}

	/** {@link #deleteIf(String, long)} of the key with these bytes. */
	public ConditionResult deleteIf(byte[] key, long version) {
		return answered(this.client.deleteIf(key, version).block());
	}

	/** {@link #update(String, Function)} of the key with these bytes. */
	public byte[] update(byte[] key, Function<Optional<byte[]>, byte[]> change) {
		return answered(this.client.update(key, change).block());
	}

	/** {@link #update(String, Function, UpdatePolicy)} of the key with these bytes. */
	public byte[] update(byte[] key, Function<Optional<byte[]>, byte[]> change, UpdatePolicy policy) {
		return answered(this.client.update(key, change, policy).block());
	}

	private static <T> T answered(@Nullable T value) {
		if (value == null) {
			throw new IllegalStateException("the request completed without its answer");
		}
		return value;
	}

	/**
	 * The records of {@code [start, end)} in key order as a lazy stream, fetched as it is
	 * consumed; close it (try-with-resources) to stop the scan early.
	 * @param end exclusive; null for the end of the key space
	 */
	public Stream<KeyValue> stream(String start, @Nullable String end) {
		return this.client.scan(start, end).toStream(STREAM_PREFETCH);
	}

}
