package io.quorumkv.service.replication;

import java.util.Optional;
import java.util.function.Consumer;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

/**
 * One copy of the data as the coordinator reaches it: this node's own storage
 * ({@link LocalReplica}) or a peer through the one peer transport ({@link PeerReplica}).
 * The coordinator treats them alike. Each call ends with exactly one of its two
 * callbacks, within the replica timeout.
 */
sealed interface Replica permits LocalReplica, PeerReplica {

	Node node();

	/**
	 * Reads the replica's entry of {@code key} (empty when it never saw the key).
	 * @param everyReplica whether the request needs every replica to answer: a peer is
	 * then tried even while its breaker says it is down, since failing without trying
	 * fails the request for certain
	 */
	void get(byte[] key, boolean everyReplica, Consumer<Optional<Entry>> onAnswer, Consumer<Throwable> onFailed);

	/**
	 * Writes a client's {@code entry}, stamped by the coordinator; {@code ack} is the
	 * request's (a local write whose answer waits for a peer anyway may be grouped with
	 * others, {@link LocalWrites}). A peer that fails it gets a hint. On
	 * {@code everyReplica} see {@link #get}.
	 */
	void write(Entry entry, int ack, boolean everyReplica, Runnable onWritten, Consumer<Throwable> onFailed);

	/**
	 * Pushes a read's winner to a replica that lags (read repair); no hint on failure.
	 */
	void repair(Entry winner, Runnable onWritten, Consumer<Throwable> onFailed);

	/**
	 * At most {@code limit} of the replica's entries of a range, tombstones included, in
	 * key order (one page of a range read, {@link RangeMerge}).
	 */
	Flux<Entry> scan(byte[] fromInclusive, byte @Nullable [] toExclusive, int limit);

}
