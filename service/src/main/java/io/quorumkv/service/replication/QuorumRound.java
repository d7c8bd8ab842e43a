package io.quorumkv.service.replication;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.quorumkv.service.cluster.RingLayout.Targets;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import org.jspecify.annotations.Nullable;

/**
 * The replies of one fanned-out request, and the three moments that matter: quorum
 * reached, quorum lost (both decided at once), and every replica answered or failed (for
 * repair and hints). Each moment fires once, outside the lock.
 *
 * <p>
 * The targets form two groups of {@code from} nodes each: the key's old owners and its
 * new owners ({@link Targets}; outside a membership change both are the same nodes).
 * Quorum is {@code ack} successes in each group; it is lost once either group has more
 * than {@code from - ack} failures. So while a key moves, a write is confirmed by
 * {@code ack} of its old owners and by {@code ack} of its new owners, and a read at
 * either side sees it when {@code R + W > from}.
 */
final class QuorumRound {

	private final int ack;

	private final int from;

	private final byte[] flags;

	private final Consumer<QuorumRound> onQuorum;

	private final Consumer<QuorumRound> onQuorumLost;

	private final Consumer<QuorumRound> onAllReplied;

	private final List<@Nullable Optional<Entry>> answers;

	private final boolean[] failed;

	private int oldSuccesses;

	private int newSuccesses;

	private int oldFailures;

	private int newFailures;

	private int replied;

	private boolean decided;

	private @Nullable String firstFailure;

	/** A round over {@code from} targets that are all old and new owners. */
	QuorumRound(Replicas replicas, Consumer<QuorumRound> onQuorum, Consumer<QuorumRound> onQuorumLost,
			Consumer<QuorumRound> onAllReplied) {
		this(replicas.ack(), replicas.from(), both(replicas.from()), onQuorum, onQuorumLost, onAllReplied);
	}

	QuorumRound(int ack, Targets targets, Consumer<QuorumRound> onQuorum, Consumer<QuorumRound> onQuorumLost,
			Consumer<QuorumRound> onAllReplied) {
		this(ack, targets.from(), targets.flags(), onQuorum, onQuorumLost, onAllReplied);
	}

	private QuorumRound(int ack, int from, byte[] flags, Consumer<QuorumRound> onQuorum,
			Consumer<QuorumRound> onQuorumLost, Consumer<QuorumRound> onAllReplied) {
		this.ack = ack;
		this.from = from;
		this.flags = flags;
		this.onQuorum = onQuorum;
		this.onQuorumLost = onQuorumLost;
		this.onAllReplied = onAllReplied;
		this.answers = new ArrayList<>(flags.length);
		for (int i = 0; i < flags.length; i++) {
			this.answers.add(null);
		}
		this.failed = new boolean[flags.length];
	}

	private static byte[] both(int size) {
		byte[] flags = new byte[size];
		Arrays.fill(flags, (byte) (Targets.OLD | Targets.NEW));
		return flags;
	}

	/** Replica {@code index} answered; {@code answer} is its entry (empty if none). */
	void succeeded(int index, Optional<Entry> answer) {
		boolean quorum;
		boolean all;
		synchronized (this) {
			this.answers.set(index, answer);
			if ((this.flags[index] & Targets.OLD) != 0) {
				this.oldSuccesses++;
			}
			if ((this.flags[index] & Targets.NEW) != 0) {
				this.newSuccesses++;
			}
			quorum = !this.decided && this.oldSuccesses >= this.ack && this.newSuccesses >= this.ack;
			this.decided |= quorum;
			all = ++this.replied == this.flags.length;
		}
		fire(quorum, false, all);
	}

	/**
	 * Replica {@code index} failed or timed out; {@code why} says how, for the answer.
	 */
	void failed(int index, String why) {
		boolean lost;
		boolean all;
		synchronized (this) {
			if (this.firstFailure == null) {
				this.firstFailure = why;
			}
			this.failed[index] = true;
			if ((this.flags[index] & Targets.OLD) != 0) {
				this.oldFailures++;
			}
			if ((this.flags[index] & Targets.NEW) != 0) {
				this.newFailures++;
			}
			int spare = this.from - this.ack;
			lost = !this.decided && (this.oldFailures > spare || this.newFailures > spare);
			this.decided |= lost;
			all = ++this.replied == this.flags.length;
		}
		fire(false, lost, all);
	}

	private void fire(boolean quorum, boolean lost, boolean all) {
		if (quorum) {
			this.onQuorum.accept(this);
		}
		if (lost) {
			this.onQuorumLost.accept(this);
		}
		if (all) {
			this.onAllReplied.accept(this);
		}
	}

	/** The greatest entry among the answers so far; null when none holds the key. */
	synchronized @Nullable Entry winner() {
		Entry winner = null;
		for (Optional<Entry> answer : this.answers) {
			if (answer != null && answer.isPresent()) {
				winner = EntryOrder.max(winner, answer.get());
			}
		}
		return winner;
	}

	/** The answer of replica {@code index}: null when it failed or has not answered. */
	synchronized @Nullable Optional<Entry> answer(int index) {
		return this.answers.get(index);
	}

	synchronized boolean hasFailed(int index) {
		return this.failed[index];
	}

	/** What the first replica that failed reported; null when none failed. */
	synchronized @Nullable String firstFailure() {
		return this.firstFailure;
	}

	/** Successes counted towards the quorum (the lesser of the two groups). */
	synchronized int successes() {
		return Math.min(this.oldSuccesses, this.newSuccesses);
	}

	int size() {
		return this.flags.length;
	}

	/** A replica's failure as the client is told it: the node and what happened. */
	static String failure(Replica replica, Throwable error) {
		String what = switch (error) {
			case CallNotPermittedException open -> "its circuit breaker is open";
			case BulkheadFullException full -> "too many calls to it in flight";
			case TimeoutException timeout -> "no answer in time";
			default ->
				error.getClass().getSimpleName() + ((error.getMessage() != null) ? ": " + error.getMessage() : "");
		};
		return replica.node() + ": " + what;
	}

}
