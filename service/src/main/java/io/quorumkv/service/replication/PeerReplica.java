package io.quorumkv.service.replication;

import java.util.Optional;
import java.util.function.Consumer;

import io.quorumkv.service.cluster.ClockGuard;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.peer.PeerClient;
import io.quorumkv.service.peer.ReplicaStreams;
import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

/**
 * A peer's copy, reached through the replica streams of the one peer transport
 * ({@link ReplicaStreams}). A client write the peer fails is kept as a hint
 * ({@link HintStore}) for delivery once it is back. An answer whose timestamp is too far
 * ahead of this node's clock counts as failed ({@link ClockGuard}): it is not adopted,
 * not answered, not repaired onto the other replicas.
 */
record PeerReplica(Node node, PeerClient client, HintStore hints, ClockGuard clock) implements Replica {

	@Override
	public void get(byte[] key, boolean everyReplica, Consumer<Optional<Entry>> onAnswer,
			Consumer<Throwable> onFailed) {
		this.client.streams().get(this.node, key, everyReplica, new ReplicaStreams.Callback<>() {

			@Override
			public void answered(Optional<Entry> answer) {
				if (answer.isPresent() && !PeerReplica.this.clock.admit(answer.get().timestamp(),
						ClockGuard.Source.READ, PeerReplica.this.node.id())) {
					onFailed.accept(PeerReplica.this.clock.refusal(answer.get().timestamp()));
				}
				else {
					onAnswer.accept(answer);
				}
			}

			@Override
			public void failed(Throwable error) {
				onFailed.accept(error);
			}

		});
	}

	@Override
	public void write(Entry entry, int ack, boolean everyReplica, Runnable onWritten, Consumer<Throwable> onFailed) {
		this.client.streams().upsert(this.node, entry, everyReplica, new ReplicaStreams.Callback<>() {

			@Override
			public void answered(Void ignored) {
				onWritten.run();
			}

			@Override
			public void failed(Throwable error) {
				PeerReplica.this.hints.add(PeerReplica.this.node, entry)
					.subscribe(null, (ignored) -> PeerReplica.this.hints.dropped());
				onFailed.accept(error);
			}

		});
	}

	@Override
	public void repair(Entry winner, Runnable onWritten, Consumer<Throwable> onFailed) {
		this.client.streams().upsert(this.node, winner, false, new ReplicaStreams.Callback<>() {

			@Override
			public void answered(Void ignored) {
				onWritten.run();
			}

			@Override
			public void failed(Throwable error) {
				onFailed.accept(error);
			}

		});
	}

	@Override
	public Flux<Entry> scan(byte[] fromInclusive, byte @Nullable [] toExclusive, int limit) {
		return ReplicaScans.page(this.client, this.node, fromInclusive, toExclusive, limit)
			.onErrorMap((error) -> new ReplicaUnavailableException(this.node, error));
	}

}
