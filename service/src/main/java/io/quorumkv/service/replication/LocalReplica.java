package io.quorumkv.service.replication;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;

import io.quorumkv.service.peer.EventLoopTimers;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

/**
 * This node's own copy: its storage, read and written within the replica timeout
 * ({@link Deadline}), written per event-loop turn ({@link LocalWrites}).
 */
record LocalReplica(Node node, Storage storage, LocalWrites writes, Duration timeout,
		EventLoopTimers timers) implements Replica {

	@Override
	public void get(byte[] key, boolean everyReplica, Consumer<Optional<Entry>> onAnswer,
			Consumer<Throwable> onFailed) {
		Deadline.subscribe(this.storage.get(key), this.timeout, this.timers,
				(entry) -> onAnswer.accept(Optional.ofNullable(entry)), onFailed);
	}

	@Override
	public void write(Entry entry, int ack, boolean everyReplica, Runnable onWritten, Consumer<Throwable> onFailed) {
		this.writes.upsert(entry, onWritten, onFailed);
	}

	@Override
	public void repair(Entry winner, Runnable onWritten, Consumer<Throwable> onFailed) {
		this.writes.upsert(winner, onWritten, onFailed);
	}

	@Override
	public Flux<Entry> scan(byte[] fromInclusive, byte @Nullable [] toExclusive, int limit) {
		return this.storage.scan(fromInclusive, toExclusive).take(limit, true);
	}

}
