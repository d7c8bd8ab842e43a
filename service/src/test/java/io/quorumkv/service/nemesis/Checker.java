package io.quorumkv.service.nemesis;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Checks a {@link History}. Every PUT sends a value never sent before, so every value a
 * read returns names the write that produced it, and every version a read returns (the
 * {@code ETag}, the winning write's timestamp) is that write's, whoever wrote it: a key
 * may have several writers at once. Writes are ordered as the replicas order them, last
 * write wins by version, where both versions are known (a value's version is learnt from
 * the reads that return it; a delete's never is); one write also precedes another when it
 * was acknowledged before the other began (real time, which a correct clock agrees with).
 * Against that order it finds:
 * <ul>
 * <li><b>lost</b> writes: after healing, a key's final state (read from every replica,
 * {@code replicas=from/from}) is older than an acknowledged write, a PUT;</li>
 * <li><b>resurrected</b> deletes: the same when that write is a DELETE and the key reads
 * a value;</li>
 * <li><b>stale</b> reads: a read returned a state older than a write acknowledged before
 * the read began, when the write's {@code ack} and the read's {@code ack} must intersect
 * ({@code ack(w) + ack(r) > max(from(w), from(r))}); the same without that intersection
 * is counted apart as allowed. A read is a GET, a 304 to a GET with {@code If-None-Match}
 * (it says the version sent is current), or a key in the bounds of a scan page: a page
 * reads each key of its bounds (up to its last record when it is full) as a GET at the
 * page's {@code ack} would, a key it leaves out as absent, since a range merges the
 * newest version of at least {@code ack} replicas as a GET does;</li>
 * <li>values <b>never written</b>: a read returned a value no client sent to that key, or
 * one whose write began after the read had completed;</li>
 * <li><b>phantom</b> versions: a version no write produced, that is one value read with
 * two versions, or a version outside its write's time (stamped before the write began or
 * after it was acknowledged, by more than {@link Timing#clockSlackMicros});</li>
 * <li><b>expired</b> values read: a value written with a {@code ttl} read after its
 * expiry (its version plus the ttl) by more than {@link Timing#ttlMarginMicros}. Before
 * its expiry less that margin it must be read, as any write: a 404 then is stale;</li>
 * <li><b>wrong conditional</b> answers: a 304 naming another version than the one sent,
 * or a 200 with the very version sent.</li>
 * </ul>
 * Writes that failed or got no answer may or may not have been applied, at any time after
 * they began (a paused coordinator stamps a request when it resumes, after later writes
 * perhaps): the checker accepts their states at any time after their invocation unless
 * their versions say otherwise, and never requires them. It also counts, per fault
 * window, the answers that were a 5xx, a 504 or none at all.
 */
final class Checker {

	/**
	 * How client times compare with versions, and the slack allowed.
	 *
	 * @param wallOffset added to a monotonic time, it gives wall-clock time in the same
	 * unit
	 * @param unitsPerMicro units of the times in a microsecond (1,000 for nanoseconds)
	 * @param clockSlackMicros how far a version may be from its write's time, or -1 not
	 * to check it (clock faults)
	 * @param ttlMarginMicros how long past its expiry a value may still be read
	 */
	record Timing(long wallOffset, long unitsPerMicro, long clockSlackMicros, long ttlMarginMicros) {

		/**
		 * The nodes' clocks are the test's (one machine): a version is stamped while its
		 * write is under way, within a second.
		 */
		static final long SLACK_MICROS = 1_000_000;

		/**
		 * How long past its expiry a value may be read, and how long before it a 404 may
		 * come: a node expires a value by its hybrid logical clock (never behind the
		 * machine's clock), at a time between the read's invocation and its completion.
		 */
		static final long TTL_MARGIN_MICROS = 250_000;

		/** Times in microseconds of the wall clock (the checker's tests). */
		static Timing micros() {
			return new Timing(0, 1, SLACK_MICROS, TTL_MARGIN_MICROS);
		}

		long wallMicros(long time) {
			return Math.floorDiv(time + this.wallOffset, this.unitsPerMicro);
		}

	}

	private Checker() {
	}

	/** With versions and times in microseconds and a slack of a second (tests). */
	static CheckReport check(List<Op> ops, List<Op> finals, List<History.Window> windows) {
		return check(ops, finals, windows, Timing.micros());
	}

	/**
	 * @param ops the clients' operations
	 * @param finals one read per key after healing, at {@code from/from}
	 * @param windows the nemesis's fault windows
	 * @param timing how times compare with versions
	 */
	static CheckReport check(List<Op> ops, List<Op> finals, List<History.Window> windows, Timing timing) {
		Map<String, List<Op>> byKey = new TreeMap<>();
		Map<String, String> keyOfValue = new HashMap<>();
		CheckReport.Builder report = new CheckReport.Builder();
		for (Op op : ops) {
			report.counted(op);
			if (op.page() != null) {
				continue;
			}
			byKey.computeIfAbsent(op.key(), (k) -> new ArrayList<>()).add(op);
			if (op.kind() == Op.Kind.PUT && op.value() != null
					&& keyOfValue.putIfAbsent(op.value(), op.key()) != null) {
				throw new IllegalArgumentException("value written twice: " + op);
			}
		}
		for (Op op : ops) {
			if (op.page() != null && op.ok()) {
				for (Op read : observations(op, byKey.keySet())) {
					report.scanKey();
					byKey.computeIfAbsent(read.key(), (k) -> new ArrayList<>()).add(read);
				}
			}
		}
		for (Map.Entry<String, List<Op>> entry : byKey.entrySet()) {
			KeyHistory key = new KeyHistory(entry.getKey(), entry.getValue(), finalsOf(finals, entry.getKey()),
					keyOfValue, timing, report);
			key.check();
		}
		for (Op read : finals) {
			if (!byKey.containsKey(read.key())) {
				new KeyHistory(read.key(), List.of(), List.of(read), keyOfValue, timing, report).check();
			}
		}
		report.windows(windowCounts(ops, windows));
		report.timeline(timeline(windows));
		return report.build();
	}

	/**
	 * The fault windows in the order they began, with their times as the operations print
	 * theirs: printed beside the anomalies, so that a failure can be placed in the plan.
	 */
	static String timeline(List<History.Window> windows) {
		return windows.stream()
			.sorted(Comparator.comparingLong(History.Window::start))
			.map((w) -> w.fault() + " [" + w.start() / 1_000_000 + ".." + w.end() / 1_000_000 + " ms]")
			.collect(java.util.stream.Collectors.joining(", "));
	}

	private static List<Op> finalsOf(List<Op> finals, String key) {
		return finals.stream().filter((read) -> read.key().equals(key)).toList();
	}

	/**
	 * What a scan page says of each key it covers: the key's record, or that the key is
	 * absent, as one read of the key ({@link Op.Kind#SCAN} without a page) with the
	 * page's times and quorum. The keys are the history's and the page's own (a key
	 * nobody wrote that a page returns is a value never written).
	 */
	static List<Op> observations(Op scan, java.util.Set<String> keys) {
		Op.Page page = scan.page();
		if (page == null) {
			return List.of();
		}
		Map<String, Op.Record> records = new TreeMap<>();
		for (Op.Record record : page.records()) {
			records.put(record.key(), record);
		}
		java.util.SortedSet<String> covered = new java.util.TreeSet<>(records.keySet());
		for (String key : keys) {
			if (page.covers(scan.key(), key)) {
				covered.add(key);
			}
		}
		List<Op> reads = new ArrayList<>();
		for (String key : covered) {
			Op.Record record = records.get(key);
			reads.add(new Op(scan.id(), scan.client(), Op.Kind.SCAN, key, (record != null) ? record.value() : null,
					scan.ack(), scan.from(), scan.node(), scan.invoked(), scan.completed(),
					(record != null) ? 200 : 404, (record != null) ? record.version() : null, 0, null, null));
		}
		return reads;
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

}
