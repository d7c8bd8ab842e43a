package io.quorumkv.service.replication;

import java.util.Objects;

import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.http.Replicas;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The coordinator: stamps writes with the node's hybrid logical clock and applies them to
 * the replicas of a key. A single node is a cluster of one, whose only replica is the
 * local storage.
 */
public class ReplicationService {

	private final Storage storage;

	private final HybridLogicalClock clock;

	public ReplicationService(Storage storage, HybridLogicalClock clock) {
		this.storage = Objects.requireNonNull(storage, "storage");
		this.clock = Objects.requireNonNull(clock, "clock");
	}

	public int clusterSize() {
		return 1;
	}

	/** The winning entry of the key (a tombstone included); empty when never written. */
	public Mono<Entry> get(byte[] key, Replicas replicas) {
		return this.storage.get(key).doOnNext((entry) -> this.clock.observe(entry.timestamp()));
	}

	/** Writes a value, or a tombstone when {@code value} is null, stamped now. */
	public Mono<Void> write(byte[] key, byte @Nullable [] value, Replicas replicas) {
		return Mono.defer(() -> this.storage.upsert(new Entry(key, value, this.clock.now())));
	}

	/** Live entries (no tombstones) of a key range, in key order. */
	public Flux<Entry> range(byte[] fromInclusive, byte @Nullable [] toExclusive) {
		return this.storage.scan(fromInclusive, toExclusive).filter((entry) -> !entry.isTombstone());
	}

}
