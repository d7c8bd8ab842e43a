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
import reactor.core.publisher.Mono;

/**
 * The acceptor's side of Paxos on one node: promises a ballot whose time is above that of
 * every one it promised before, accepts a proposal at or above its promise, and answers
 * only once its state is durable ({@link AcceptorTable#sync}). A prepare's answer carries
 * what the node's storage holds for the key, the ballot of the most recent commit this
 * node recorded for it, and the proposal it accepted unless that commit is at or above it
 * (Cassandra's lightweight transactions v1: a proposal at or below a commit is that
 * commit's value or one that can never be chosen).
 *
 * <p>
 * A commit is recorded ({@link #commit}) only once this node's storage holds the
 * committed entry (or a newer version): a promise that reports a commit then reports a
 * current entry at least as new as the committed one. The coordinator sends it after the
 * ordinary write path stored the entry at a majority, so the data travels once, with
 * hints, read repair and repair, and a recorded commit means a majority stores it. A key
 * without a row counts as committed at the table's floor: see {@link #purge} for why that
 * is safe.
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
			Row row;
			synchronized (this) {
				row = row(key);
				// Above in time, not only by the node id: two nodes' ballots of one
				// microsecond never both get a majority, so every value chosen fresh has
				// a timestamp of its own, and an entry tells whose proposal it is.
				ok = ballot.micros() > row.promised().micros();
				if (ok) {
					row = new Row(ballot, row.accepted(), row.commit(), this.wallMillis.getAsLong());
					generation = this.table.put(key, row);
				}
				else {
					generation = this.table.generation();
				}
			}
			Row answered = row;
			if (!ok) {
				return this.table.sync(generation).thenReturn(Promise.refused(answered.promised()));
			}
			return this.table.sync(generation)
				.then(this.storage.apply(key).map(java.util.Optional::of).defaultIfEmpty(java.util.Optional.empty()))
				.map((found) -> promise(answered, found.orElse(null), this.maxValues));
		});
	}

	/**
	 * The key's row, or what a key without one counts as: promised and committed at the
	 * floor, nothing accepted.
	 */
	private Row row(byte[] key) {
		Row row = this.table.row(key);
		if (row != null) {
			return row;
		}
		Ballot floor = this.table.floor();
		return new Row(floor, null, floor, 0);
	}

	/**
	 * The answer to a promise: the accepted proposal only while it is above the most
	 * recent commit; then the stored entry goes whole only when both values together are
	 * at most {@code maxValues} bytes, else as its version only, so that the answer fits
	 * in one frame whatever the sizes of the two values.
	 */
	private static Promise promise(Row row, @Nullable Entry current, int maxValues) {
		Proposal accepted = row.accepted();
		if (accepted != null && accepted.ballot().isAbove(row.commit())) {
			if (current == null || current.isTombstone() || length(current) + length(accepted.entry()) <= maxValues) {
				return new Promise(true, row.promised(), accepted, current, false, row.commit());
			}
			Entry version = Entry.wrap(current.key(), new byte[0], current.timestamp(), Entry.NO_EXPIRY);
			return new Promise(true, row.promised(), accepted, version, true, row.commit());
		}
		return new Promise(true, row.promised(), null, current, false, row.commit());
	}

	private static long length(Entry entry) {
		return (entry.value() != null) ? entry.value().length : 0;
	}

	Mono<Vote> propose(Proposal proposal) {
		return Mono.defer(() -> {
			Ballot ballot = proposal.ballot();
			byte[] key = proposal.entry().key();
			this.observe.test(ballot.micros());
			boolean ok;
			long generation;
			Ballot promised;
			synchronized (this) {
				Row row = row(key);
				promised = row.promised();
				ok = !promised.isAbove(ballot);
				if (ok) {
					promised = ballot;
					generation = this.table.put(key,
							new Row(ballot, proposal, row.commit(), this.wallMillis.getAsLong()));
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
	 * Records that the entry of {@code key} stamped {@code timestamp} was chosen at
	 * {@code ballot} and written to a majority: only when this node's storage holds it
	 * (or a newer version) and the key has a row (a key without one counts as committed
	 * at the floor, which may be at the ballot already). It raises the row's promise to
	 * the ballot too: a round below a commit could only propose in an instance already
	 * decided. Not synced: a commit forgotten in a crash leaves a proposal to complete
	 * again (the same entry, harmless), and the next promise that reports it is answered
	 * only once it is on disk.
	 * @return whether it was recorded
	 */
	Mono<Boolean> commit(Ballot ballot, byte[] key, long timestamp) {
		return Mono.defer(() -> {
			this.observe.test(ballot.micros());
			return this.storage.apply(key).map((found) -> found.timestamp() >= timestamp).defaultIfEmpty(false);
		}).map((stored) -> stored && record(ballot, key));
	}

	private synchronized boolean record(Ballot ballot, byte[] key) {
		Row row = this.table.row(key);
		if (row == null) {
			return !ballot.isAbove(this.table.floor());
		}
		if (ballot.isAbove(row.commit())) {
			this.table.put(key,
					new Row(Ballot.max(row.promised(), ballot), row.accepted(), ballot, this.wallMillis.getAsLong()));
		}
		return true;
	}

	/**
	 * Drops the rows untouched for {@code grace} whose accepted proposal, if any, is
	 * committed (so stored at a majority): those can no longer change an answer but
	 * through the table's floor, which every key without a row counts as having promised
	 * and committed at.
	 *
	 * <p>
	 * The floor as a commit is safe though it stands for keys this node never saw: a
	 * proposal it hides (an accepted ballot at or below the floor, reported by another
	 * acceptor) is one whose round began at least {@code grace}, less the clocks' skew,
	 * before the promise. Its request was answered or gave up within the Paxos timeout:
	 * if it was acknowledged, a majority stored it by then and the promising majority
	 * reads it (or something newer) as the current value; if not, no one learnt it was
	 * chosen, and once a round chose anything above it, it can never be completed (the
	 * ballot chosen above it is the highest any majority reports, or its commit is). So
	 * {@code grace} must exceed the Paxos timeout and the commit's write plus the largest
	 * clock skew ({@link PaxosProperties}).
	 * @return how many were dropped
	 */
	Mono<Integer> purge(Duration grace) {
		return Mono.defer(() -> {
			Map<ByteBuffer, Row> old = this.table.untouchedSince(this.wallMillis.getAsLong() - grace.toMillis());
			int count = 0;
			for (Map.Entry<ByteBuffer, Row> candidate : old.entrySet()) {
				Row row = candidate.getValue();
				Proposal accepted = row.accepted();
				if ((accepted == null || !accepted.ballot().isAbove(row.commit())) && purge(candidate.getKey(), row)) {
					count++;
				}
			}
			int dropped = count;
			return this.table.sync(this.table.generation()).thenReturn(dropped);
		});
	}

	private synchronized boolean purge(ByteBuffer key, Row row) {
		return this.table.purge(key, row);
	}

}
