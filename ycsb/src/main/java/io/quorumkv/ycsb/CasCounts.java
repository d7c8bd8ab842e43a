package io.quorumkv.ycsb;

import java.util.concurrent.atomic.LongAdder;

/**
 * What the conditional updates of one YCSB run came to, beside YCSB's own counts: the
 * rounds they took (a round past the first is a retry after another writer came between),
 * how many were applied, lost every round ({@code conflicts}) or failed otherwise. Shared
 * by a binding's threads; the binding's last {@code cleanup} prints {@link #line} to
 * standard error, where {@code scripts/conditional-speed.sh} reads it.
 */
public final class CasCounts {

	/** The start of the printed line. */
	public static final String PREFIX = "conditional-updates:";

	private final LongAdder applied = new LongAdder();

	private final LongAdder conflicts = new LongAdder();

	private final LongAdder failed = new LongAdder();

	private final LongAdder rounds = new LongAdder();

	void applied(int roundsTaken) {
		this.applied.increment();
		this.rounds.add(roundsTaken);
	}

	void conflict(int roundsTaken) {
		this.conflicts.increment();
		this.rounds.add(roundsTaken);
	}

	void failed(int roundsTaken) {
		this.failed.increment();
		this.rounds.add(roundsTaken);
	}

	/** Updates counted so far, whatever their outcome. */
	public long updates() {
		return this.applied.sum() + this.conflicts.sum() + this.failed.sum();
	}

	/** Updates that lost every round to another writer. */
	public long conflicts() {
		return this.conflicts.sum();
	}

	/** Rounds past each update's first. */
	public long retries() {
		return this.rounds.sum() - updates();
	}

	/**
	 * {@code conditional-updates: store=S updates=N applied=A conflicts=C failed=F
	 * rounds=R retries=T}.
	 */
	public String line(String store) {
		return PREFIX + " store=" + store + " updates=" + updates() + " applied=" + this.applied.sum() + " conflicts="
				+ this.conflicts.sum() + " failed=" + this.failed.sum() + " rounds=" + this.rounds.sum() + " retries="
				+ retries();
	}

}
