package io.quorumkv.service.paxos;

import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.random.RandomGenerator;

import io.quorumkv.service.cluster.RingLayout.Targets;
import io.quorumkv.service.paxos.Messages.Promise;
import io.quorumkv.service.paxos.Messages.Vote;
import io.quorumkv.service.paxos.Paxos.Outcome;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Expiry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The coordinator's side of Paxos for one key, Cassandra's lightweight transactions (v1)
 * as the model. A round: prepare a new ballot at a majority of the key's acceptors, which
 * promise it and report what they accepted above their most recent commit, that commit's
 * ballot, and what their storage holds; complete a proposal in progress first (accepted
 * above every commit reported: propose it again, unchanged, under this ballot, commit,
 * start over); else evaluate the condition against the newest stored version, propose the
 * new entry stamped with this ballot's time (above every version reported), and commit
 * it: the ordinary write path stores it at a majority, then the acceptors record the
 * commit's ballot ({@link Acceptor#commit}).
 *
 * <p>
 * An entry keeps the timestamp it was first proposed with, whichever round completes it,
 * so the version a {@code 201} names is the one stored. Since no two ballots of one
 * microsecond both get a majority ({@link Acceptor}), each entry chosen fresh has a
 * timestamp of its own, and a request knows its own proposal when it finds it stored.
 *
 * <p>
 * A refusal (a higher ballot promised elsewhere: contention) starts a new round after a
 * random backoff, until the deadline. A proposal of this request that some acceptors
 * accepted but no majority did may still be completed by another round; the next rounds
 * settle it: it is seen stored or completes in this request's round (applied), or a
 * stored version reaches past it (whether it was applied is then unknown, and the caller
 * is told so), or the condition still holds and a new proposal is made, or the current
 * value is chosen again above it so that it never can be (and the condition failed). A
 * write is acknowledged only when stored within twice the timeout of its start (the
 * acceptors' purge relies on it: {@link Acceptor#purge}).
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
	private Mono<Outcome> promised(Attempt attempt, Ballot ballot, List<Promise> answers) {
		Promises promises = Promises.of(answers);
		long newest = promises.newest();
		if (ballot.micros() <= newest) {
			// A stored version at or above this ballot's time (a plain write, a skewed
			// clock): the next ballot will be above it.
			this.clock.observe(newest);
			return round(attempt);
		}
		Proposal inProgress = promises.inProgress();
		if (inProgress != null) {
			return complete(attempt, ballot, inProgress.entry());
		}
		Entry current = promises.current();
		List<Entry> proposed = attempt.proposed;
		if (current != null && proposed.contains(current)) {
			// One of this request's proposals was chosen and committed, perhaps by
			// another round.
			Mono<Void> stored = promises.everywhere() ? Mono.empty() : this.network.store(current);
			return stored.then(applied(attempt, current));
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
			Outcome read = new Outcome.Read(live);
			return (promises.everywhere() || current == null) ? Mono.just(read)
					: this.network.store(current).thenReturn(read);
		}
		if (!condition.test(live)) {
			if (proposed.isEmpty()) {
				return Mono.just(new Outcome.Failed(live));
			}
			// A proposal of this request may still be completed by another round: choose
			// the current value again (unchanged: no new version) above it first, so
			// that it never can be.
			Entry same = (current != null) ? current : Entry.tombstone(attempt.key, ballot.micros());
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
	 * Completes a value accepted in an earlier round: proposes it again, unchanged, under
	 * this ballot and commits it; then starts over (or answers, when it is this
	 * request's).
	 */
	private Mono<Outcome> complete(Attempt attempt, Ballot ballot, Entry inProgress) {
		Proposal proposal = new Proposal(ballot, inProgress);
		return accept(proposal).flatMap((tally) -> {
			if (!tally.succeeded()) {
				return refused(attempt, tally.bads().stream().map(Vote::promised).toList(), tally);
			}
			this.clock.observe(ballot.micros());
			Mono<Void> committed = commit(attempt, proposal);
			if (attempt.proposed.contains(inProgress)) {
				return committed.then(applied(attempt, inProgress));
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
			this.clock.observe(proposal.ballot().micros());
			Mono<Void> committed = commit(attempt, proposal);
			if (!ours) {
				// Chosen above every proposal of this request: none of them ever will be.
				// The condition failed on the value it kept.
				Entry kept = proposal.entry();
				return committed.thenReturn(new Outcome.Failed(kept.isTombstone() ? null : live(kept)));
			}
			return committed.then(applied(attempt, proposal.entry()));
		});
	}

	/**
	 * Commits a chosen proposal: its entry written through the ordinary write path to a
	 * majority, then its ballot recorded by the acceptors that store it (a majority of
	 * them lets the next round see it committed; fewer only makes a round complete it
	 * again, unchanged).
	 */
	private Mono<Void> commit(Attempt attempt, Proposal proposal) {
		Targets targets = this.network.acceptors(proposal.entry().key());
		return this.network.store(proposal.entry())
			.onErrorMap((error) -> new Paxos.Unresolved(
					"chosen, but its commit failed (a later request completes it): " + error.getMessage(),
					!attempt.proposed.isEmpty()))
			.then(Tally.collect(targets,
					(index) -> this.network.commit(targets.nodes().get(index), proposal.ballot(), proposal.entry()),
					Boolean::booleanValue))
			.then();
	}

	/**
	 * This request's entry, stored at a majority: applied, when that happened within
	 * twice the timeout of the request's start; after it, perhaps too late for a round
	 * that no longer sees it in progress ({@link Acceptor#purge}), so not acknowledged.
	 */
	private Mono<Outcome> applied(Attempt attempt, Entry entry) {
		return Mono.defer(() -> (this.nanoTime.getAsLong() - attempt.start > 2 * this.timeout.toNanos())
				? Mono.error(new Paxos.Unresolved("applied, but stored only after twice the timeout", true))
				: Mono.just(new Outcome.Applied(entry)));
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
