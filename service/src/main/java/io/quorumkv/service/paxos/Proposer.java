package io.quorumkv.service.paxos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.random.RandomGenerator;

import io.quorumkv.service.cluster.RingLayout.Targets;
import io.quorumkv.service.paxos.Messages.Promise;
import io.quorumkv.service.paxos.Messages.Vote;
import io.quorumkv.service.paxos.Paxos.Outcome;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import io.quorumkv.storage.Expiry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The coordinator's side of Paxos for one key, Cassandra's lightweight transactions (v1)
 * as the model. A round: prepare a new ballot at a majority of the key's acceptors, which
 * promise it and report what they accepted and what their storage holds; complete an
 * accepted proposal their storage does not hold yet first (propose it again under this
 * ballot, commit, start over); else evaluate the condition against the newest stored
 * version, propose the new entry, and commit it through the ordinary write path.
 *
 * <p>
 * Invariant: every entry proposed is stamped with the time of the ballot it is proposed
 * under, above every version the round's majority reported (a completed value is stamped
 * again). Since no two ballots of one microsecond both get a majority ({@link Acceptor}),
 * the stored version of a key is the time of the ballot that chose it, an accepted
 * proposal is in progress exactly when it is newer than every version stored in the
 * majority, and a proposal left accepted on a minority under an older ballot never looks
 * newer than what was chosen above it.
 *
 * <p>
 * A refusal (a higher ballot promised elsewhere: contention) starts a new round after a
 * random backoff, until the deadline. A proposal of this request that some acceptors
 * accepted but no majority did may still be completed by another round; the next rounds
 * settle it: it is seen stored or completes in this request's round (applied), or a
 * stored version reaches past it (whether it was applied is then unknown, and the caller
 * is told so), or the condition still holds and a new proposal is made, or the current
 * value is chosen again above it so that it never can be (and the condition failed).
 */
final class Proposer {

	/** Rounds at most, whatever the deadline (a bound against a livelock bug). */
	private static final int MAX_ROUNDS = 10_000;

	private static final Duration FIRST_BACKOFF = Duration.ofMillis(2);

	private static final Duration MAX_BACKOFF = Duration.ofMillis(100);

	private final Network network;

	private final BallotClock clock;

	private final Duration timeout;

	private final LongSupplier nanoTime;

	private final RandomGenerator random;

	private final Function<Duration, Mono<?>> sleep;

	Proposer(Network network, BallotClock clock, Duration timeout, LongSupplier nanoTime, RandomGenerator random,
			Function<Duration, Mono<?>> sleep) {
		this.network = network;
		this.clock = clock;
		this.timeout = timeout;
		this.nanoTime = nanoTime;
		this.random = random;
		this.sleep = sleep;
	}

	/**
	 * Writes {@code value} (a tombstone when null; expiring {@code ttlSeconds} after its
	 * timestamp when positive) when {@code condition} holds for the key's current entry
	 * (null when absent, deleted or expired).
	 */
	Mono<Outcome> write(byte[] key, byte @Nullable [] value, long ttlSeconds, Predicate<@Nullable Entry> condition) {
		return start(key, value, ttlSeconds, condition);
	}

	private Mono<Outcome> start(byte[] key, byte @Nullable [] value, long ttlSeconds,
			@Nullable Predicate<@Nullable Entry> condition) {
		return Mono.defer(() -> {
			Attempt attempt = new Attempt(key, value, ttlSeconds, condition, this.nanoTime.getAsLong());
			return round(attempt);
		});
	}

	/**
	 * The key's current entry (null when absent, deleted or expired) once any proposal in
	 * progress is completed: a read that sees every conditional write acknowledged before
	 * it began.
	 */
	Mono<Outcome> read(byte[] key) {
		return start(key, null, 0, null);
	}

	/** One request's state across its rounds. */
	private static final class Attempt {

		final byte[] key;

		final byte @Nullable [] value;

		final long ttlSeconds;

		/** Null for a serial read. */
		final @Nullable Predicate<@Nullable Entry> condition;

		final long start;

		int rounds;

		/**
		 * The entries this request proposed that may have been accepted somewhere (each
		 * stamped with its own ballot's time, so no other request's entry equals one).
		 */
		final List<Entry> proposed = new ArrayList<>();

		/** How the last phase without a majority went, for the failure's message. */
		String lastTally = "";

		Attempt(byte[] key, byte @Nullable [] value, long ttlSeconds, @Nullable Predicate<@Nullable Entry> condition,
				long start) {
			this.key = key;
			this.value = value;
			this.ttlSeconds = ttlSeconds;
			this.condition = condition;
			this.start = start;
		}

	}

	private Mono<Outcome> round(Attempt attempt) {
		if (this.nanoTime.getAsLong() - attempt.start > this.timeout.toNanos() || ++attempt.rounds > MAX_ROUNDS) {
			return Mono
				.error(new Paxos.Unresolved(
						"no decision within " + this.timeout.toMillis()
								+ " ms (contention or unreachable acceptors; last: " + attempt.lastTally + ")",
						!attempt.proposed.isEmpty()));
		}
		Ballot ballot = this.clock.next();
		Targets targets = this.network.acceptors(attempt.key);
		return Tally
			.<Promise>collect(targets, (index) -> this.network.prepare(targets.nodes().get(index), ballot, attempt.key),
					Promise::ok)
			.flatMap((tally) -> tally.succeeded() ? promised(attempt, ballot, tally.goods())
					: refused(attempt, tally.bads().stream().map(Promise::promised).toList(), tally));
	}

	/** A majority promised {@code ballot}. */
	private Mono<Outcome> promised(Attempt attempt, Ballot ballot, List<Promise> promises) {
		long newest = Long.MIN_VALUE;
		Entry current = null;
		Proposal accepted = null;
		for (Promise promise : promises) {
			Entry stored = promise.current();
			if (stored != null) {
				newest = Math.max(newest, stored.timestamp());
				if (!promise.versionOnly()) {
					current = EntryOrder.max(current, stored);
				}
			}
			Proposal proposal = promise.accepted();
			if (proposal != null && (accepted == null || proposal.ballot().isAbove(accepted.ballot()))) {
				accepted = proposal;
			}
		}
		if (ballot.micros() <= newest) {
			// A stored version at or above this ballot's time (a plain write, a skewed
			// clock): the next ballot will be above it.
			this.clock.observe(newest);
			return round(attempt);
		}
		if (accepted != null && accepted.entry().timestamp() > newest) {
			// In progress: chosen perhaps, stored nowhere in this majority. Complete it.
			return complete(attempt, ballot, accepted.entry());
		}
		List<Entry> proposed = attempt.proposed;
		if (current != null && proposed.contains(current)) {
			// One of this request's proposals was chosen (and completed by this round's
			// majority holding it).
			return this.network.commit(current).thenReturn(new Outcome.Applied(current));
		}
		if (!proposed.isEmpty() && newest >= proposed.get(0).timestamp()) {
			return Mono.error(new Paxos.Unresolved(
					"a competing write reached past this one before it was known whether it had been applied", true));
		}
		if (current == null ? newest != Long.MIN_VALUE : current.timestamp() < newest) {
			// The newest version came without its value (beside a large proposal that
			// is not in progress): never decide on an older one. Rare; the next round
			// may find it whole.
			attempt.lastTally = "the newest version came without its value";
			return backoff(attempt);
		}
		Entry live = (current != null) ? live(current) : null;
		Predicate<@Nullable Entry> condition = attempt.condition;
		if (condition == null) {
			// A serial read: the newest version, written to a majority before it is
			// answered when some of this majority lack it.
			boolean everywhere = promises.stream()
				.allMatch((p) -> Objects.equals(p.current(), promises.get(0).current()));
			Outcome read = new Outcome.Read(live);
			return (everywhere || current == null) ? Mono.just(read) : this.network.commit(current).thenReturn(read);
		}
		if (!condition.test(live)) {
			if (proposed.isEmpty()) {
				return Mono.just(new Outcome.Failed(live));
			}
			// A proposal of this request may still be completed by another round: choose
			// the current value again above it first, so that it never can be.
			Entry same = (current != null) ? restamp(current, ballot) : Entry.tombstone(attempt.key, ballot.micros());
			return propose(attempt, new Proposal(ballot, same), false);
		}
		byte[] value = attempt.value;
		Entry entry = (value != null)
				? Entry.wrap(attempt.key, value, ballot.micros(),
						(attempt.ttlSeconds > 0) ? Expiry.after(ballot.micros(), attempt.ttlSeconds) : Entry.NO_EXPIRY)
				: Entry.tombstone(attempt.key, ballot.micros());
		return propose(attempt, new Proposal(ballot, entry), true);
	}

	/**
	 * Completes a value accepted in an earlier round: proposes it again under this
	 * ballot, stamped with this ballot's time (so that a proposal of an older ballot,
	 * left accepted on a minority, never looks newer than what was chosen above it), and
	 * commits it; then starts over.
	 */
	private Mono<Outcome> complete(Attempt attempt, Ballot ballot, Entry inProgress) {
		Proposal proposal = new Proposal(ballot, restamp(inProgress, ballot));
		return accept(proposal).flatMap((tally) -> {
			if (!tally.succeeded()) {
				return refused(attempt, tally.bads().stream().map(Vote::promised).toList(), tally);
			}
			this.clock.observe(ballot.micros());
			Mono<Void> committed = this.network.commit(proposal.entry());
			if (attempt.proposed.contains(inProgress)) {
				return committed.thenReturn(new Outcome.Applied(proposal.entry()));
			}
			return committed.then(Mono.defer(() -> round(attempt)));
		});
	}

	/**
	 * Proposes {@code proposal}: this request's entry ({@code ours}), or the current
	 * value again, which settles an earlier proposal of this request.
	 */
	private Mono<Outcome> propose(Attempt attempt, Proposal proposal, boolean ours) {
		if (ours) {
			attempt.proposed.add(proposal.entry());
		}
		return accept(proposal).flatMap((tally) -> {
			if (!tally.succeeded()) {
				if (ours && tally.fullyRefused()) {
					// Refused by every acceptor: accepted nowhere, it can never be
					// chosen.
					attempt.proposed.remove(proposal.entry());
				}
				return refused(attempt, tally.bads().stream().map(Vote::promised).toList(), tally);
			}
			this.clock.observe(proposal.entry().timestamp());
			if (!ours) {
				// Chosen above every proposal of this request: none of them ever will be.
				// The condition failed on the value it kept.
				Entry kept = proposal.entry();
				return this.network.commit(kept).thenReturn(new Outcome.Failed(kept.isTombstone() ? null : live(kept)));
			}
			return this.network.commit(proposal.entry())
				.onErrorMap((error) -> new Paxos.Unresolved(
						"chosen, but its commit failed (a later request completes it): " + error.getMessage(), true))
				.thenReturn(new Outcome.Applied(proposal.entry()));
		});
	}

	/** {@code entry} stamped with {@code ballot}'s time, its expiry kept. */
	private static Entry restamp(Entry entry, Ballot ballot) {
		return Entry.wrap(entry.key(), entry.value(), ballot.micros(), entry.expiresAt());
	}

	private Mono<Tally<Vote>> accept(Proposal proposal) {
		Targets targets = this.network.acceptors(proposal.entry().key());
		return Tally.collect(targets, (index) -> this.network.propose(targets.nodes().get(index), proposal), Vote::ok,
				true);
	}

	/**
	 * A phase without a majority: after a random backoff, a new round above the highest
	 * ballot the refusals named (acceptors that failed to answer are tried again, until
	 * the deadline).
	 */
	private Mono<Outcome> refused(Attempt attempt, List<Ballot> promised, Tally<?> tally) {
		attempt.lastTally = tally.summary();
		for (Ballot ballot : promised) {
			this.clock.observe(ballot.micros());
		}
		return backoff(attempt);
	}

	/** A new round after a random pause that grows with the rounds so far. */
	private Mono<Outcome> backoff(Attempt attempt) {
		long ceiling = Math.min(MAX_BACKOFF.toNanos(), FIRST_BACKOFF.toNanos() << Math.min(attempt.rounds, 10));
		Duration pause = Duration.ofNanos(this.random.nextLong(ceiling + 1));
		return this.sleep.apply(pause).then(Mono.defer(() -> round(attempt)));
	}

	/** {@code entry} as a condition sees it: null when deleted or expired. */
	private @Nullable Entry live(Entry entry) {
		Entry seen = entry.asSeenAt(this.clock.current());
		return seen.isTombstone() ? null : seen;
	}

}
