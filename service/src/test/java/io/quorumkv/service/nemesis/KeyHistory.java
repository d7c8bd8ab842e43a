package io.quorumkv.service.nemesis;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * One key's operations, checked as {@link Checker} says: its writes (by every writer),
 * its reads (GETs, conditional GETs, the scan pages' observations of it) and its final
 * read. The versions of its values are learnt from all its reads first, so that a read is
 * judged by every version the history shows.
 */
final class KeyHistory {

	private final String key;

	private final List<Op> writes = new ArrayList<>();

	private final List<Op> reads = new ArrayList<>();

	private final List<Op> finals;

	private final Map<String, String> keyOfValue;

	private final Checker.Timing timing;

	private final CheckReport.Builder report;

	private final Map<String, Op> putOfValue = new HashMap<>();

	private final Map<String, Long> versionOfValue = new HashMap<>();

	private final Map<Long, String> valueOfVersion = new HashMap<>();

	KeyHistory(String key, List<Op> ops, List<Op> finals, Map<String, String> keyOfValue, Checker.Timing timing,
			CheckReport.Builder report) {
		this.key = key;
		for (Op op : ops) {
			if (op.isWrite()) {
				this.writes.add(op);
				if (op.kind() == Op.Kind.PUT && op.value() != null) {
					this.putOfValue.put(op.value(), op);
				}
			}
			else if (op.isKeyRead() && op.ok()) {
				this.reads.add(op);
			}
		}
		this.finals = finals;
		this.keyOfValue = keyOfValue;
		this.timing = timing;
		this.report = report;
	}

	void check() {
		for (Op read : this.reads) {
			learn(read);
		}
		for (Op read : this.finals) {
			learn(read);
		}
		for (Op read : this.reads) {
			checkRead(read);
		}
		for (Op read : this.finals) {
			checkFinal(read);
		}
	}

	/**
	 * Records the version a 200 gives its value, and reports a phantom: one value with
	 * two versions, one version with two values, or a version outside its write's time.
	 */
	private void learn(Op read) {
		if (read.status() != 200 || read.value() == null || read.version() == null) {
			return;
		}
		Op put = this.putOfValue.get(read.value());
		if (put == null) {
			return;
		}
		long version = Long.parseUnsignedLong(read.version(), 16);
		Long known = this.versionOfValue.putIfAbsent(read.value(), version);
		String owner = this.valueOfVersion.putIfAbsent(version, read.value());
		long slack = this.timing.clockSlackMicros();
		if (known != null && known != version) {
			this.report.phantom(
					read + ": the value of " + put + " was read with version " + Long.toHexString(known) + " before");
		}
		else if (owner != null && !owner.equals(read.value())) {
			this.report.phantom(read + ": version " + read.version() + " is the value " + owner + "'s");
		}
		else if (slack >= 0 && version < this.timing.wallMicros(put.invoked()) - slack) {
			this.report.phantom(read + ": a version older than its write " + put + " by "
					+ (this.timing.wallMicros(put.invoked()) - version) / 1_000 + " ms");
		}
		else if (slack >= 0 && put.ok() && version > this.timing.wallMicros(put.completed()) + slack) {
			this.report.phantom(read + ": a version younger than its write " + put + " by "
					+ (version - this.timing.wallMicros(put.completed())) / 1_000 + " ms");
		}
	}

	private void checkRead(Op read) {
		List<Op> required = new ArrayList<>();
		List<Op> allowed = new ArrayList<>();
		for (Op write : this.writes) {
			if (write.ok() && write.completed() < read.invoked()) {
				allowed.add(write);
				if (write.ack() + read.ack() > Math.max(write.from(), read.from())) {
					required.add(write);
				}
			}
		}
		List<@Nullable Op> states = explanations(read);
		if (states == null) {
			return;
		}
		checkExpiry(read, states);
		Stale stale = stale(states, required);
		if (stale != null) {
			String kind = (read.kind() == Op.Kind.SCAN) ? "scan" : (read.status() == 304) ? "304" : "get";
			Op seen = stale.seen();
			boolean byVersionOnly = seen != null && required.stream().noneMatch((write) -> before(seen, write));
			this.report.stale(kind, byVersionOnly, read + " returned " + describe(read, stale.seen()) + " though "
					+ stale.newer() + " completed before it began" + versions(stale.seen(), stale.newer()));
		}
		else if (stale(states, allowed) != null) {
			this.report.staleAllowed();
		}
	}

	private void checkFinal(Op read) {
		this.report.finalRead();
		if (!read.ok()) {
			this.report.unreadable(read.toString());
			return;
		}
		List<Op> acknowledged = this.writes.stream().filter(Op::ok).toList();
		List<@Nullable Op> states = explanations(read);
		if (states == null) {
			return;
		}
		checkExpiry(read, states);
		Stale stale = stale(states, acknowledged);
		if (stale == null) {
			return;
		}
		Op newest = stale.newer();
		int ack = 0;
		for (Op write : acknowledged) {
			if (older(stale.seen(), write)) {
				ack = Math.max(ack, write.ack());
				if (later(write, newest)) {
					newest = write;
				}
			}
		}
		String text = this.key + ": final read " + describe(read, stale.seen()) + " after acknowledged " + newest;
		if (newest.kind() == Op.Kind.DELETE && read.status() == 200) {
			this.report.resurrected(text);
		}
		else {
			this.report.lost(ack, text);
		}
	}

	/** A state seen (null: the initial one) and a write it must not be older than. */
	private record Stale(@Nullable Op seen, Op newer) {

	}

	/**
	 * Null when one of the states that explain a read is older than none of the required
	 * writes; else the latest such state and a write that overrides it.
	 */
	private @Nullable Stale stale(List<@Nullable Op> states, List<Op> required) {
		Stale found = null;
		for (Op state : states) {
			Op newer = null;
			for (Op write : required) {
				if (older(state, write)) {
					newer = write;
					break;
				}
			}
			if (newer == null) {
				return null;
			}
			found = new Stale(state, newer);
		}
		return found;
	}

	/**
	 * Whether {@code write} overrides the state {@code state} left (null: the initial
	 * state): by version (last write wins) when both are known, or by real time when
	 * {@code state}'s write was acknowledged before {@code write} began. A write without
	 * an answer is never older by real time: it may be stamped at any time after it
	 * began.
	 */
	private boolean older(@Nullable Op state, Op write) {
		if (state == null) {
			return true;
		}
		Long a = versionOf(state);
		Long b = versionOf(write);
		if (a != null && b != null && Long.compareUnsigned(a, b) < 0) {
			return true;
		}
		return before(state, write);
	}

	/** Whether {@code state}'s write was acknowledged before {@code write} began. */
	private static boolean before(Op state, Op write) {
		return state.ok() && state.completed() < write.invoked();
	}

	/** Whether {@code a} is later than {@code b}: by version when both known. */
	private boolean later(Op a, Op b) {
		Long va = versionOf(a);
		Long vb = versionOf(b);
		return (va != null && vb != null) ? Long.compareUnsigned(va, vb) > 0 : a.completed() > b.completed();
	}

	private @Nullable Long versionOf(Op write) {
		return (write.kind() == Op.Kind.PUT && write.value() != null) ? this.versionOfValue.get(write.value()) : null;
	}

	/**
	 * The states that may explain a read's answer: for a value (a 200, or a 304 naming
	 * the version sent) the write of that value; for a 404 the initial state (null), the
	 * deletes begun before the read completed and the PUTs with a ttl that may have
	 * expired by then. Null when the answer names no write (reported here).
	 */
	private @Nullable List<@Nullable Op> explanations(Op read) {
		if (read.status() == 404) {
			List<@Nullable Op> states = new ArrayList<>();
			states.add(null);
			for (Op write : this.writes) {
				if (write.invoked() < read.completed() && (write.kind() == Op.Kind.DELETE
						|| (write.ttlSeconds() > 0 && mayHaveExpired(write, read.completed())))) {
					states.add(write);
				}
			}
			return states;
		}
		String value = read.value();
		if (read.status() == 304) {
			if (!java.util.Objects.equals(read.version(), read.ifNoneMatch())) {
				this.report.wrongConditional(read + ": a 304 for another version than the one sent");
			}
			value = (read.ifNoneMatch() != null)
					? this.valueOfVersion.get(Long.parseUnsignedLong(read.ifNoneMatch(), 16)) : null;
			if (value == null) {
				this.report.phantom(read + ": a 304 for a version no read returned");
				return null;
			}
		}
		else if (read.ifNoneMatch() != null && read.ifNoneMatch().equals(read.version())) {
			this.report.wrongConditional(read + ": a 200 for the very version sent");
		}
		Op put = (value != null) ? this.putOfValue.get(value) : null;
		if (put == null) {
			String other = (value != null) ? this.keyOfValue.get(value) : null;
			this.report.neverWritten(read + ": " + ((other != null) ? "a value written to " + other : "never sent"));
			return null;
		}
		if (put.invoked() > read.completed()) {
			this.report.neverWritten(read + ": its write " + put + " began after the read completed");
			return null;
		}
		List<@Nullable Op> states = new ArrayList<>();
		states.add(put);
		return states;
	}

	/** Whether {@code put}'s value may have expired by {@code time} (monotonic). */
	private boolean mayHaveExpired(Op put, long time) {
		Long version = versionOf(put);
		long stamped = (version != null) ? version
				: this.timing.wallMicros(put.invoked()) - Math.max(0, this.timing.clockSlackMicros());
		return stamped + put.ttlSeconds() * 1_000_000 - this.timing.ttlMarginMicros() <= this.timing.wallMicros(time);
	}

	/** Reports a value read after its expiry by more than the margin. */
	private void checkExpiry(Op read, List<@Nullable Op> states) {
		if (read.status() == 404 || states.size() != 1 || states.getFirst() == null) {
			return;
		}
		Op put = states.getFirst();
		Long version = versionOf(put);
		if (put.ttlSeconds() == 0 || version == null) {
			return;
		}
		long late = this.timing.wallMicros(read.invoked())
				- (version + put.ttlSeconds() * 1_000_000 + this.timing.ttlMarginMicros());
		if (late > 0) {
			this.report.expired(
					read + " returned the value of " + put + " " + late / 1_000 + " ms past its expiry and the margin");
		}
	}

	/** The versions of two writes, when both are known. */
	private String versions(@Nullable Op seen, Op newer) {
		Long a = (seen != null) ? versionOf(seen) : null;
		Long b = versionOf(newer);
		return (a != null && b != null) ? " (versions " + Long.toHexString(a) + " and " + Long.toHexString(b) + ")"
				: "";
	}

	private static String describe(Op read, @Nullable Op seen) {
		if (seen == null) {
			return "the initial state (absent)";
		}
		if (seen.kind() == Op.Kind.DELETE) {
			return "absent (" + seen + ")";
		}
		return (read.status() == 404) ? "absent (" + seen + " expired)" : "the value of " + seen;
	}

}
