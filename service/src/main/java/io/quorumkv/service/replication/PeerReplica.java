package io.quorumkv.service.replication;

import java.util.Optional;
import java.util.function.Consumer;

import io.quorumkv.service.cluster.ClockGuard;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A peer's copy, reached through the {@link PeerClient}: single operations are coalesced
 * into batch calls by the peer's {@link PeerBatcher} (null: batching off, one call per
 * operation). A client write the peer fails is kept as a hint ({@link HintStore}) for
 * delivery once it is back. An answer whose timestamp is too far ahead of this node's
 * clock counts as failed ({@link ClockGuard}): it is not adopted, not answered, not
 * repaired onto the other replicas.
 */
record PeerReplica(Node node, PeerClient client, @Nullable PeerBatcher batcher, HintStore hints,
		ClockGuard clock) implements Replica {

	@Override
	public void get(byte[] key, Consumer<Optional<Entry>> onAnswer, Consumer<Throwable> onFailed) {
		Mono<Optional<Entry>> call = (this.batcher != null) ? this.batcher.get(key) : this.client.get(this.node, key);
		call.subscribe((answer) -> {
			if (answer.isPresent()
					&& !this.clock.admit(answer.get().timestamp(), ClockGuard.Source.READ, this.node.id())) {
				onFailed.accept(this.clock.refusal(answer.get().timestamp()));
			}
			else {
				onAnswer.accept(answer);
			}
		}, onFailed);
	}

	@Override
	public void write(Entry entry, int ack, Runnable onWritten, Consumer<Throwable> onFailed) {
		upsert(entry).subscribe(null, (error) -> {
			this.hints.add(this.node, entry).subscribe(null, (ignored) -> this.hints.dropped());
			onFailed.accept(error);
		}, onWritten);
	}

	@Override
	public void repair(Entry winner, Runnable onWritten, Consumer<Throwable> onFailed) {
		upsert(winner).subscribe(null, onFailed, onWritten);
	}

	@Override
	public Flux<Entry> scan(byte[] fromInclusive, byte @Nullable [] toExclusive, int limit) {
		return this.client.scan(this.node, fromInclusive, toExclusive, limit)
			.onErrorMap((error) -> new ReplicaUnavailableException(this.node, error));
	}

	private Mono<Void> upsert(Entry entry) {
		return (this.batcher != null) ? this.batcher.upsert(entry) : this.client.upsert(this.node, entry);
	}

}
