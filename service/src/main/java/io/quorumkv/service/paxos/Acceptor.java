package io.quorumkv.service.paxos;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Map;
import java.util.function.Function;
import java.util.function.LongPredicate;
import java.util.function.LongSupplier;

import io.quorumkv.service.paxos.AcceptorTable.Row;
import io.quorumkv.service.paxos.Messages.Promise;
import io.quorumkv.service.paxos.Messages.Vote;
import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The acceptor's side of Paxos on one node: promises a ballot whose time is above that of
 * every one it promised before, accepts a proposal at or above its promise, and answers
 * only once its state is durable ({@link AcceptorTable#sync}). A prepare's answer carries
 * what the node's storage holds for the key and the proposal it accepted that its storage
 * does not hold yet (a proposal in progress, or a chosen one whose commit has not reached
 * it).
 *
 * <p>
 * Every ballot it sees moves this node's clock past it ({@code observe}); the clock's
 * durable mark keeps this node's own ballots above it after a restart.
 */
final class Acceptor {

	private final AcceptorTable table;

	private final Function<byte[], Mono<Entry>> storage;

	private final LongPredicate observe;

	private final LongSupplier wallMillis;

	private final int maxValues;

	/**
	 * @param storage this node's entry of a key (empty when it has none)
	 * @param observe moves this node's clock past a ballot's time
	 * @param maxValues the most value bytes one promise carries (the largest value: a
	 * promise then fits in a frame)
	 */
	Acceptor(AcceptorTable table, Function<byte[], Mono<Entry>> storage, LongPredicate observe, LongSupplier wallMillis,
			int maxValues) {
		this.maxValues = maxValues;
		this.table = table;
		this.storage = storage;
		this.observe = observe;
		this.wallMillis = wallMillis;
	}

	Mono<Promise> prepare(Ballot ballot, byte[] key) {
		return Mono.defer(() -> {
			this.observe.test(ballot.micros());
			boolean ok;
			long generation;
			Ballot promised;
			Proposal accepted;
			synchronized (this) {
				Row row = this.table.row(key);
				promised = (row != null) ? row.promised() : this.table.floor();
				accepted = (row != null) ? row.accepted() : null;
				// Above in time, not only by the node id: two nodes' ballots of one
				// microsecond never both get a majority, so every value chosen fresh has
				// a timestamp of its own, and an entry tells whose proposal it is.
				ok = ballot.micros() > promised.micros();
				if (ok) {
					promised = ballot;
					generation = this.table.put(key, new Row(ballot, accepted, this.wallMillis.getAsLong()));
				}
				else {
					generation = this.table.generation();
				}
			}
			Ballot answered = promised;
			if (!ok) {
				return this.table.sync(generation).thenReturn(new Promise(false, answered, null, null, false));
			}
			return this.table.sync(generation)
				.then(this.storage.apply(key).map(java.util.Optional::of).defaultIfEmpty(java.util.Optional.empty()))
				.map((found) -> promise(answered, accepted, found.orElse(null), this.maxValues));
		});
	}

	/**
	 * The answer to a promise: the accepted proposal only while the storage does not hold
	 * it (or something newer); then the stored entry goes whole only when both values
	 * together are at most {@code maxValues} bytes, else as its version only, so that the
	 * answer fits in one frame whatever the sizes of the two values.
	 */
	private static Promise promise(Ballot promised, @Nullable Proposal accepted, @Nullable Entry current,
			int maxValues) {
		if (accepted != null && (current == null || current.timestamp() < accepted.entry().timestamp())) {
			if (current == null || current.isTombstone() || length(current) + length(accepted.entry()) <= maxValues) {
				return new Promise(true, promised, accepted, current, false);
			}
			Entry version = Entry.wrap(current.key(), new byte[0], current.timestamp(), Entry.NO_EXPIRY);
			return new Promise(true, promised, accepted, version, true);
		}
		return new Promise(true, promised, null, current, false);
	}

	private static long length(Entry entry) {
		return (entry.value() != null) ? entry.value().length : 0;
	}

	Mono<Vote> propose(Proposal proposal) {
		return Mono.defer(() -> {
			Ballot ballot = proposal.ballot();
			this.observe.test(ballot.micros());
			boolean ok;
			long generation;
			Ballot promised;
			synchronized (this) {
				Row row = this.table.row(proposal.entry().key());
				promised = (row != null) ? row.promised() : this.table.floor();
				ok = !promised.isAbove(ballot);
				if (ok) {
					promised = ballot;
					generation = this.table.put(proposal.entry().key(),
							new Row(ballot, proposal, this.wallMillis.getAsLong()));
				}
				else {
					generation = this.table.generation();
				}
			}
			Vote vote = new Vote(ok, promised);
			return this.table.sync(generation).thenReturn(vote);
		});
	}

	/**
	 * Drops the rows untouched for {@code grace} whose accepted proposal, if any, the
	 * storage holds (or holds something newer than): those can no longer change an answer
	 * but through the table's floor.
	 * @return how many were dropped
	 */
	Mono<Integer> purge(Duration grace) {
		return Mono.defer(() -> {
			Map<ByteBuffer, Row> old = this.table.untouchedSince(this.wallMillis.getAsLong() - grace.toMillis());
			return Flux.fromIterable(old.entrySet()).concatMap((candidate) -> {
				Row row = candidate.getValue();
				Proposal accepted = row.accepted();
				Mono<Boolean> stored = (accepted == null) ? Mono.just(true)
						: this.storage.apply(accepted.entry().key())
							.map((found) -> found.timestamp() >= accepted.entry().timestamp())
							.defaultIfEmpty(false);
				return stored.map((done) -> done && purge(candidate.getKey(), row));
			})
				.filter(Boolean::booleanValue)
				.count()
				.flatMap((count) -> this.table.sync(this.table.generation()).thenReturn(count.intValue()));
		});
	}

	private synchronized boolean purge(ByteBuffer key, Row row) {
		return this.table.purge(key, row);
	}

}
