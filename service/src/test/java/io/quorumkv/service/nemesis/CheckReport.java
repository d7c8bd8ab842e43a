package io.quorumkv.service.nemesis;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the {@link Checker} found.
 *
 * @param operations operations checked (final reads not included)
 * @param acknowledgedWrites PUTs answered 201 and DELETEs answered 202
 * @param okReads GETs answered 200 or 404
 * @param finalReads keys read after healing
 * @param lost acknowledged writes lost (by the write's {@code ack})
 * @param resurrected acknowledged deletes undone
 * @param stale reads older than a write they must see
 * @param staleByRead the same by what read: {@code get}, {@code 304} (a conditional GET)
 * or {@code scan} (a key in a scan page's bounds)
 * @param staleByVersionOnly stale reads that only the versions show: no write they must
 * see was acknowledged before their state's write began
 * @param staleAllowed reads older than a completed write they need not see (R + W not
 * over {@code from})
 * @param neverWritten reads of a value no client wrote to that key (or not yet)
 * @param unreadable final reads that failed after healing
 * @param phantom versions no write produced (one value read with two versions, or a
 * version outside its write's time)
 * @param expired values read past their ttl and the margin
 * @param wrongConditional a 304 for another version than the one sent, or a 200 with it
 * @param reads answered reads and writes of the newer kinds: {@code 304}s, {@code scan
 * page}s, {@code scan key}s (keys a page spoke for) and acknowledged {@code ttl put}s
 * @param answers answers by fault window
 * @param examples a few of each anomaly
 */
record CheckReport(long operations, long acknowledgedWrites, long okReads, long finalReads, Map<Integer, Long> lost,
		long resurrected, long stale, Map<String, Long> staleByRead, long staleByVersionOnly, long staleAllowed,
		long neverWritten, long unreadable, long phantom, long expired, long wrongConditional, Map<String, Long> reads,
		Map<String, Answers> answers, List<String> examples) {

	/** Answered operations of a kind of {@link #reads}, 0 if none. */
	long readsOf(String kind) {
		return this.reads.getOrDefault(kind, 0L);
	}

	/** Stale reads of one kind: {@code get}, {@code 304} or {@code scan}. */
	long staleBy(String read) {
		return this.staleByRead.getOrDefault(read, 0L);
	}

	long lostTotal() {
		return this.lost.values().stream().mapToLong(Long::longValue).sum();
	}

	/** Lost writes that had been acknowledged by at least {@code ack} replicas. */
	long lostWithAckAtLeast(int ack) {
		return this.lost.entrySet().stream().filter((e) -> e.getKey() >= ack).mapToLong(Map.Entry::getValue).sum();
	}

	boolean clean() {
		return lostTotal() == 0 && this.resurrected == 0 && this.stale == 0 && this.neverWritten == 0
				&& this.unreadable == 0 && this.phantom == 0 && this.expired == 0 && this.wrongConditional == 0;
	}

	String summary() {
		StringBuilder text = new StringBuilder();
		text.append("operations ")
			.append(this.operations)
			.append(", acknowledged writes ")
			.append(this.acknowledgedWrites)
			.append(", ok reads ")
			.append(this.okReads)
			.append(", final reads ")
			.append(this.finalReads)
			.append(", of them ")
			.append(this.reads)
			.append('\n');
		text.append("lost ")
			.append(lostTotal())
			.append(" (by ack ")
			.append(this.lost)
			.append("), resurrected ")
			.append(this.resurrected)
			.append(", stale quorum reads ")
			.append(this.stale)
			.append(" (by read ")
			.append(this.staleByRead)
			.append(", by version only ")
			.append(this.staleByVersionOnly)
			.append(')')
			.append(" (stale without R+W>from: ")
			.append(this.staleAllowed)
			.append("), never written ")
			.append(this.neverWritten)
			.append(", final unreadable ")
			.append(this.unreadable)
			.append(", phantom versions ")
			.append(this.phantom)
			.append(", expired values read ")
			.append(this.expired)
			.append(", wrong conditional answers ")
			.append(this.wrongConditional)
			.append('\n');
		this.answers
			.forEach((window, a) -> text.append("  window ").append(window).append(": ").append(a).append('\n'));
		this.examples.forEach((e) -> text.append("  ").append(e).append('\n'));
		return text.toString();
	}

	/**
	 * Answers of one fault window.
	 *
	 * @param total operations invoked in it
	 * @param serverErrors 5xx answers (504 and 503 included)
	 * @param timeouts 504 answers
	 * @param unavailable 503 answers
	 * @param noAnswer no answer in time or the connection lost
	 */
	record Answers(long total, long serverErrors, long timeouts, long unavailable, long noAnswer) {

		static Answers of(Op op) {
			int s = op.status();
			return new Answers(1, (s >= 500) ? 1 : 0, (s == 504) ? 1 : 0, (s == 503) ? 1 : 0, (s == -1) ? 1 : 0);
		}

		Answers plus(Answers other) {
			return new Answers(this.total + other.total, this.serverErrors + other.serverErrors,
					this.timeouts + other.timeouts, this.unavailable + other.unavailable,
					this.noAnswer + other.noAnswer);
		}

		@Override
		public String toString() {
			return this.total + " ops, " + this.serverErrors + " 5xx (" + this.timeouts + " 504, " + this.unavailable
					+ " 503), " + this.noAnswer + " unanswered";
		}

	}

	static final class Builder {

		private static final int EXAMPLES_PER_CLASS = 5;

		private long operations;

		private long acknowledgedWrites;

		private long okReads;

		private long finalReads;

		private final Map<Integer, Long> lost = new TreeMap<>();

		private long resurrected;

		private long stale;

		private final Map<String, Long> staleByRead = new TreeMap<>();

		private long staleByVersionOnly;

		private long phantom;

		private long expired;

		private long wrongConditional;

		private final Map<String, Long> reads = new TreeMap<>();

		private long staleAllowed;

		private long neverWritten;

		private long unreadable;

		private Map<String, Answers> answers = Map.of();

		private final List<String> examples = new ArrayList<>();

		private String timeline = "";

		private final Map<String, Integer> examplesByClass = new TreeMap<>();

		void counted(Op op) {
			this.operations++;
			if (op.ok()) {
				String kind = (op.page() != null) ? "scan page" : (op.status() == 304) ? "304"
						: (op.kind() == Op.Kind.PUT && op.ttlSeconds() > 0) ? "ttl put" : null;
				if (kind != null) {
					this.reads.merge(kind, 1L, Long::sum);
				}
				if (op.isWrite()) {
					this.acknowledgedWrites++;
				}
				else {
					this.okReads++;
				}
			}
		}

		void scanKey() {
			this.reads.merge("scan key", 1L, Long::sum);
		}

		void finalRead() {
			this.finalReads++;
		}

		void lost(int ack, String text) {
			this.lost.merge(ack, 1L, Long::sum);
			example("lost", text);
		}

		void resurrected(String text) {
			this.resurrected++;
			example("resurrected", text);
		}

		void stale(String read, boolean byVersionOnly, String text) {
			this.stale++;
			this.staleByRead.merge(read, 1L, Long::sum);
			if (byVersionOnly) {
				this.staleByVersionOnly++;
			}
			example("stale", text);
		}

		void phantom(String text) {
			this.phantom++;
			example("phantom", text);
		}

		void expired(String text) {
			this.expired++;
			example("expired", text);
		}

		void wrongConditional(String text) {
			this.wrongConditional++;
			example("wrong conditional", text);
		}

		void staleAllowed() {
			this.staleAllowed++;
		}

		void neverWritten(String text) {
			this.neverWritten++;
			example("never written", text);
		}

		void unreadable(String text) {
			this.unreadable++;
			example("unreadable", text);
		}

		void windows(Map<String, Answers> answers) {
			this.answers = answers;
		}

		/** The fault windows in order, listed after the anomalies when there are any. */
		void timeline(String windows) {
			this.timeline = windows;
		}

		private void example(String kind, String text) {
			int count = this.examplesByClass.merge(kind, 1, Integer::sum);
			if (count <= EXAMPLES_PER_CLASS) {
				this.examples.add(kind + ": " + text);
			}
		}

		private List<String> examples() {
			List<String> all = new ArrayList<>(this.examples);
			if (!all.isEmpty() && !this.timeline.isEmpty()) {
				all.add("fault windows: " + this.timeline);
			}
			return List.copyOf(all);
		}

		CheckReport build() {
			return new CheckReport(this.operations, this.acknowledgedWrites, this.okReads, this.finalReads,
					Collections.unmodifiableMap(new TreeMap<>(this.lost)), this.resurrected, this.stale,
					Collections.unmodifiableMap(new TreeMap<>(this.staleByRead)), this.staleByVersionOnly,
					this.staleAllowed, this.neverWritten, this.unreadable, this.phantom, this.expired,
					this.wrongConditional, Collections.unmodifiableMap(new TreeMap<>(this.reads)),
					Collections.unmodifiableMap(new LinkedHashMap<>(this.answers)), examples());
		}

	}

}
