package io.quorumkv.service.nemesis;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Checks a {@link History}. Each key is written by one client at a time and every PUT
 * sends a value never sent before, so the writes of a key form one sequence and every
 * value a read returns names the write that produced it; a 404 is the initial state or
 * one of the key's deletes. Against that sequence it finds:
 * <ul>
 * <li><b>lost</b> writes: after healing, a key's final state (read from every replica,
 * {@code replicas=from/from}) is older than its last acknowledged write, a PUT;</li>
 * <li><b>resurrected</b> deletes: the same when that last acknowledged write is a DELETE
 * and the key reads a value;</li>
 * <li><b>stale</b> quorum reads: a read returned a state older than a write that
 * completed, acknowledged, before the read began, when the write's {@code ack} and the
 * read's {@code ack} must intersect ({@code ack(w) + ack(r) > max(from(w), from(r))});
 * the same without that intersection is counted apart as allowed;</li>
 * <li>values <b>never written</b>: a read returned a value no client sent to that key, or
 * one whose write began after the read had completed.</li>
 * </ul>
 * Writes that failed or got no answer may or may not have been applied, at any time after
 * they began (a paused coordinator stamps a request when it resumes, after later writes
 * perhaps): the checker accepts their states at any time after their invocation, and
 * never requires them. It also counts, per fault window, the answers that were a 5xx, a
 * 504 or none at all.
 */
final class Checker {

	/** Where a read is: before any write of its key. */
	private static final int INITIAL = -1;

	/** A read that maps to no write of its key. */
	private static final int NOWHERE = Integer.MIN_VALUE;

	private Checker() {
	}

	/**
	 * @param ops the clients' operations
	 * @param finals one read per key after healing, at {@code from/from}
	 * @param windows the nemesis's fault windows
	 */
	static CheckReport check(List<Op> ops, List<Op> finals, List<History.Window> windows) {
		Map<String, List<Op>> byKey = new TreeMap<>();
		Map<String, String> keyOfValue = new HashMap<>();
		for (Op op : ops) {
			byKey.computeIfAbsent(op.key(), (k) -> new ArrayList<>()).add(op);
			if (op.kind() == Op.Kind.PUT && op.value() != null
					&& keyOfValue.putIfAbsent(op.value(), op.key()) != null) {
				throw new IllegalArgumentException("value written twice: " + op);
			}
		}
		CheckReport.Builder report = new CheckReport.Builder();
		for (Map.Entry<String, List<Op>> entry : byKey.entrySet()) {
			KeyHistory key = KeyHistory.of(entry.getKey(), entry.getValue());
			for (Op op : entry.getValue()) {
				report.counted(op);
				if (op.kind() == Op.Kind.GET && op.ok()) {
					key.checkRead(op, keyOfValue, report);
				}
			}
		}
		for (Op read : finals) {
			KeyHistory key = KeyHistory.of(read.key(), byKey.getOrDefault(read.key(), List.of()));
			key.checkFinal(read, keyOfValue, report);
		}
		report.windows(windowCounts(ops, windows));
		return report.build();
	}

	/** Answers by fault window (the window an operation was invoked in). */
	static Map<String, CheckReport.Answers> windowCounts(List<Op> ops, List<History.Window> windows) {
		Map<String, CheckReport.Answers> counts = new LinkedHashMap<>();
		List<History.Window> sorted = new ArrayList<>(windows);
		sorted.sort(Comparator.comparingLong(History.Window::start));
		for (Op op : ops) {
			String name = "no fault";
			for (History.Window window : sorted) {
				if (window.start() <= op.invoked() && op.invoked() < window.end()) {
					name = window.fault().split(" ", 2)[0];
					break;
				}
			}
			counts.merge(name, CheckReport.Answers.of(op), CheckReport.Answers::plus);
		}
		return counts;
	}

	/** One key's writes in their (single writer's) order. */
	private record KeyHistory(String key, List<Op> writes) {

		static KeyHistory of(String key, List<Op> ops) {
			List<Op> writes = new ArrayList<>();
			for (Op op : ops) {
				if (op.isWrite()) {
					writes.add(op);
				}
			}
			writes.sort(Comparator.comparingLong(Op::invoked));
			for (int i = 1; i < writes.size(); i++) {
				if (writes.get(i).invoked() < writes.get(i - 1).completed()) {
					throw new IllegalArgumentException("two writes of " + key + " overlap (one writer per key): "
							+ writes.get(i - 1) + " and " + writes.get(i));
				}
			}
			return new KeyHistory(key, writes);
		}

		void checkRead(Op read, Map<String, String> keyOfValue, CheckReport.Builder report) {
			int required = INITIAL;
			int allowedRequired = INITIAL;
			for (int i = 0; i < this.writes.size(); i++) {
				Op write = this.writes.get(i);
				if (write.ok() && write.completed() < read.invoked()) {
					allowedRequired = i;
					if (write.ack() + read.ack() > Math.max(write.from(), read.from())) {
						required = i;
					}
				}
			}
			int seen = resolve(read, required, keyOfValue, report);
			if (seen == NOWHERE) {
				return;
			}
			if (!explains(seen, required)) {
				report.stale(read + " returned " + describe(seen) + " though " + this.writes.get(required)
						+ " completed before it began");
			}
			else if (!explains(seen, allowedRequired)) {
				report.staleAllowed();
			}
		}

		void checkFinal(Op read, Map<String, String> keyOfValue, CheckReport.Builder report) {
			report.finalRead();
			if (!read.ok()) {
				report.unreadable(read.toString());
				return;
			}
			int lastAcknowledged = INITIAL;
			for (int i = 0; i < this.writes.size(); i++) {
				if (this.writes.get(i).ok()) {
					lastAcknowledged = i;
				}
			}
			int seen = resolve(read, lastAcknowledged, keyOfValue, report);
			if (seen == NOWHERE || explains(seen, lastAcknowledged)) {
				return;
			}
			Op last = this.writes.get(lastAcknowledged);
			String text = this.key + ": final read " + describe(seen) + " after acknowledged " + last;
			if (last.kind() == Op.Kind.DELETE && read.status() == 200) {
				report.resurrected(text);
			}
			else {
				report.lost(last.ack(), text);
			}
		}

		/**
		 * Whether reading the state of write {@code seen} is allowed when write
		 * {@code required} must be seen: a later write, or one whose outcome the client
		 * never learnt (it may take effect at any time after it began, after later writes
		 * too: its coordinator stamps it when it gets to it).
		 */
		private boolean explains(int seen, int required) {
			return seen >= required || (seen >= 0 && !this.writes.get(seen).ok());
		}

		/**
		 * The write a read's answer came from, {@link #INITIAL}, or {@link #NOWHERE}; for
		 * a 404, the delete (begun before the read completed) that best explains it.
		 */
		private int resolve(Op read, int required, Map<String, String> keyOfValue, CheckReport.Builder report) {
			if (read.status() == 404) {
				int seen = INITIAL;
				for (int i = 0; i < this.writes.size(); i++) {
					Op write = this.writes.get(i);
					if (write.kind() == Op.Kind.DELETE && write.invoked() < read.completed()
							&& (explains(i, required) || !explains(seen, required))) {
						seen = i;
					}
				}
				return seen;
			}
			String value = read.value();
			for (int i = 0; i < this.writes.size(); i++) {
				Op write = this.writes.get(i);
				if (write.kind() == Op.Kind.PUT && write.value() != null && write.value().equals(value)) {
					if (write.invoked() > read.completed()) {
						report.neverWritten(read + ": its write " + write + " began after the read completed");
						return NOWHERE;
					}
					return i;
				}
			}
			String other = (value != null) ? keyOfValue.get(value) : null;
			report.neverWritten(read + ": " + ((other != null) ? "a value written to " + other : "never sent"));
			return NOWHERE;
		}

		private String describe(int seen) {
			return (seen == INITIAL) ? "the initial state (absent)" : (this.writes.get(seen).kind() == Op.Kind.DELETE)
					? "absent (" + this.writes.get(seen) + ")" : "the value of " + this.writes.get(seen);
		}

	}

}
