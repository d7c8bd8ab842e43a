package io.quorumkv.service.replication;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import org.jspecify.annotations.Nullable;

/**
 * The replies of one fanned-out request, and the three moments that matter: quorum
 * reached ({@code ack} successes, decided at once), quorum lost (more than
 * {@code from - ack} failures, decided at once), and every replica answered or failed
 * (for repair and hints). Each moment fires once, outside the lock.
 */
final class QuorumRound {

	private final int ack;

	private final int from;

	private final Consumer<QuorumRound> onQuorum;

	private final Consumer<QuorumRound> onQuorumLost;

	private final Consumer<QuorumRound> onAllReplied;

	private final List<@Nullable Optional<Entry>> answers;

	private final boolean[] failed;

	private int successes;

	private int failures;

	private boolean decided;

	private @Nullable String firstFailure;

	QuorumRound(Replicas replicas, Consumer<QuorumRound> onQuorum, Consumer<QuorumRound> onQuorumLost,
			Consumer<QuorumRound> onAllReplied) {
		this.ack = replicas.ack();
		this.from = replicas.from();
		this.onQuorum = onQuorum;
		this.onQuorumLost = onQuorumLost;
		this.onAllReplied = onAllReplied;
		this.answers = new ArrayList<>(this.from);
		for (int i = 0; i < this.from; i++) {
			this.answers.add(null);
		}
		this.failed = new boolean[this.from];
	}

	/** Replica {@code index} answered; {@code answer} is its entry (empty if none). */
	void succeeded(int index, Optional<Entry> answer) {
		boolean quorum;
		boolean all;
		synchronized (this) {
			this.answers.set(index, answer);
			this.successes++;
			quorum = !this.decided && this.successes == this.ack;
			this.decided |= quorum;
			all = this.successes + this.failures == this.from;
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
			this.failures++;
			lost = !this.decided && this.failures > this.from - this.ack;
			this.decided |= lost;
			all = this.successes + this.failures == this.from;
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

	synchronized int successes() {
		return this.successes;
	}

	int size() {
		return this.from;
	}

}
