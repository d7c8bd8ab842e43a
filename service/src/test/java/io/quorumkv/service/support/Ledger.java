package io.quorumkv.service.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What clients were told about each key, to check a store after faults. Every key is
 * written by one client thread only, one operation at a time, so its history is linear:
 * an acknowledged write (201, 202) makes its value the only possible one; a write that
 * failed or got no answer may or may not have been applied, so it adds its value to the
 * possible ones. A key is <em>certain</em> while one value is possible.
 */
public final class Ledger {

	/** The state of a key deleted (or never written): a read answers 404. */
	public static final String GONE = "\u0000gone";

	private final Map<String, Set<String>> possible = new ConcurrentHashMap<>();

	public final AtomicLong putsAcked = new AtomicLong();

	public final AtomicLong deletesAcked = new AtomicLong();

	public final AtomicLong failed = new AtomicLong();

	public final AtomicLong rejected = new AtomicLong();

	/** Answers of the writes by status (-1: no answer). */
	private final Map<Integer, AtomicLong> statuses = new ConcurrentHashMap<>();

	/** Counts one answer of a write. */
	public void answered(int status) {
		this.statuses.computeIfAbsent(status, (s) -> new AtomicLong()).incrementAndGet();
	}

	/** How many writes were answered with {@code status} (-1: not at all). */
	public long answers(int status) {
		AtomicLong count = this.statuses.get(status);
		return (count != null) ? count.get() : 0;
	}

	/** Every status answered, with its count. */
	public Map<Integer, Long> answers() {
		Map<Integer, Long> copy = new java.util.TreeMap<>();
		this.statuses.forEach((status, count) -> copy.put(status, count.get()));
		return copy;
	}

	/** The cut opened last ({@link #openCut()}), or null. */
	private volatile @org.jspecify.annotations.Nullable Cut cut;

	/**
	 * Records one write that was sent at {@code sentNanos} ({@link System#nanoTime()}):
	 * as {@link #record(String, String, boolean)}, and in the open cut if it may be in
	 * it.
	 */
	public void record(String key, @org.jspecify.annotations.Nullable String value, boolean acked, long sentNanos) {
		record(key, value, acked);
		Cut open = this.cut;
		if (open != null) {
			open.recorded(key, value, sentNanos);
		}
	}

	/**
	 * Opens a cut: what a snapshot taken from now until {@link Cut#close()} may hold of
	 * this ledger's keys, while writes go on
	 * ({@link #record(String, String, boolean, long)} with their send time). Any state
	 * possible now stays possible in it, and so does every write answered before the
	 * close or sent before it (in flight at the snapshot, it may be on either side of its
	 * time); a write sent after the close is not in it.
	 */
	public Cut openCut() {
		Cut opened = new Cut();
		// Open before the copy: a write recorded meanwhile is in the copy, in the cut, or
		// both.
		this.cut = opened;
		this.possible.forEach((key, states) -> {
			synchronized (states) {
				opened.allow(key, states);
			}
		});
		return opened;
	}

	/**
	 * The states a snapshot taken within a window of the writes may hold
	 * ({@link #openCut()}).
	 */
	public static final class Cut {

		private final Map<String, Set<String>> allowed = new ConcurrentHashMap<>();

		private volatile long closedAt;

		private volatile boolean closed;

		private final AtomicLong inWindow = new AtomicLong();

		void allow(String key, Set<String> states) {
			Set<String> set = this.allowed.computeIfAbsent(key, (k) -> ConcurrentHashMap.newKeySet());
			set.addAll(states);
		}

		void recorded(String key, @org.jspecify.annotations.Nullable String value, long sentNanos) {
			if (!this.closed || sentNanos - this.closedAt < 0) {
				Set<String> set = this.allowed.computeIfAbsent(key, (k) -> {
					Set<String> fresh = ConcurrentHashMap.newKeySet();
					fresh.add(GONE);
					return fresh;
				});
				set.add((value != null) ? value : GONE);
				this.inWindow.incrementAndGet();
			}
		}

		/**
		 * The writes answered while the cut was open, or sent before its close and
		 * answered after.
		 */
		public long writesInWindow() {
			return this.inWindow.get();
		}

		/** Ends the window: writes sent from now on are after the snapshot. */
		public void close() {
			this.closedAt = System.nanoTime();
			this.closed = true;
		}

		/**
		 * A ledger of what a restore of the snapshot may read for each of {@code keys}: a
		 * key first written after the close reads gone.
		 */
		public Ledger asLedger(Set<String> keys) {
			Ledger ledger = new Ledger();
			for (String key : keys) {
				Set<String> states = this.allowed.get(key);
				ledger.possible.put(key, new HashSet<>((states != null) ? states : Set.of(GONE)));
			}
			return ledger;
		}

	}

	/** Records one write: {@code value} null for a delete, {@code acked} as answered. */
	public void record(String key, @org.jspecify.annotations.Nullable String value, boolean acked) {
		String state = (value != null) ? value : GONE;
		Set<String> states = this.possible.computeIfAbsent(key, (k) -> new HashSet<>(Set.of(GONE)));
		synchronized (states) {
			if (acked) {
				states.clear();
				if (value != null) {
					this.putsAcked.incrementAndGet();
				}
				else {
					this.deletesAcked.incrementAndGet();
				}
			}
			else {
				this.failed.incrementAndGet();
			}
			states.add(state);
		}
	}

	public Set<String> keys() {
		return this.possible.keySet();
	}

	public Set<String> possible(String key) {
		Set<String> states = this.possible.get(key);
		synchronized (states) {
			return Set.copyOf(states);
		}
	}

	public boolean certain(String key) {
		return possible(key).size() == 1;
	}

	public long acked() {
		return this.putsAcked.get() + this.deletesAcked.get();
	}

	/**
	 * Waits until {@code count} more writes than now are acknowledged, for at most
	 * {@code limit} (then fails with {@code what}): a phase "under load" waits for the
	 * load to have done something, not for a time.
	 */
	public void awaitMoreAcked(String what, long count, Duration limit) {
		long target = acked() + count;
		Eventually.eventually(limit, () -> assertThat(acked()).as(what).isGreaterThanOrEqualTo(target));
	}

	/** Keys whose last acknowledged state is a delete (a read must answer 404). */
	public List<String> certainlyDeleted() {
		List<String> keys = new ArrayList<>();
		for (String key : keys()) {
			if (possible(key).equals(Set.of(GONE))) {
				keys.add(key);
			}
		}
		return keys;
	}

	@Override
	public String toString() {
		return "puts acked " + this.putsAcked + ", deletes acked " + this.deletesAcked + ", failed or unanswered "
				+ this.failed + ", keys " + this.possible.size();
	}

	/**
	 * Writes {@code keys} keys ({@code prefix-i}, values of about {@code valueSize}
	 * bytes) at 2/3 through the nodes in turn, from four threads sharing one client (one
	 * connection pool: an HTTP client per key left thousands of idle connections and
	 * selector threads behind, enough to starve a test's own requests on a busy machine),
	 * records each here, and checks that all were acknowledged. A write not acknowledged
	 * (a 504 when a starved machine stalls the nodes' loops past the replica timeout) is
	 * sent again with the same value, at most {@value #PRELOAD_ATTEMPTS} times in all:
	 * the preload is the data a test starts from, not what it checks.
	 */
	/** Sends of one preload write before it counts as not acknowledged. */
	static final int PRELOAD_ATTEMPTS = 3;

	public void preload(List<String> nodes, String prefix, int keys, int valueSize) {
		java.util.concurrent.ExecutorService writers = java.util.concurrent.Executors.newFixedThreadPool(4);
		KvClient shared = new KvClient(Duration.ofSeconds(10));
		String padding = "x".repeat(valueSize);
		for (int i = 0; i < keys; i++) {
			String key = prefix + "-" + i;
			String node = nodes.get(i % nodes.size());
			writers.execute(() -> {
				String value = key + padding;
				boolean acked = false;
				for (int attempt = 0; attempt < PRELOAD_ATTEMPTS && !acked; attempt++) {
					acked = shared.put(node, key, value, "2/3") == 201;
				}
				record(key, value, acked);
			});
		}
		writers.shutdown();
		try {
			assertThat(writers.awaitTermination(3, java.util.concurrent.TimeUnit.MINUTES)).isTrue();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		assertThat(this.putsAcked.get()).isEqualTo(keys);
	}

}
