package io.quorumkv.service.replication;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import io.quorumkv.service.peer.EventLoopTimers;
import io.quorumkv.service.peer.EventLoops;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import org.jspecify.annotations.Nullable;

/**
 * The writes this node coordinates, into its own storage: on an event loop, every write
 * of one turn of the loop (the requests of one wake-up) goes to the storage together, in
 * one {@link Storage#upsertAll} once the turn's reading is done, so that the LSM writes
 * their WAL records with one {@code write(2)} instead of one per request (a group write
 * gathers only what other threads queue meanwhile, and a node's requests mostly share one
 * loop; docs/performance.md). Off the loops (a test, a JDBC worker) and with grouping
 * off, each write goes at once, alone.
 *
 * <p>
 * A write is answered when its group is: the group's storage write succeeded, failed (all
 * of its writes fail with the same error) or did not end within the timeout. The storage
 * orders versions of a key by their timestamps (DESIGN §3), so writes grouped in any
 * order read the same. A turn holds what its requests brought, so a group is bounded by
 * what a loop reads in one wake-up.
 */
final class LocalWrites {

	private final Storage storage;

	private final Duration timeout;

	private final EventLoopTimers loops;

	/** Per loop, touched only by that loop's thread; null when grouping is off. */
	private final Turn @Nullable [] turns;

	LocalWrites(Storage storage, Duration timeout, EventLoopTimers loops, boolean grouped) {
		this.storage = storage;
		this.timeout = timeout;
		this.loops = loops;
		if (grouped) {
			this.turns = new Turn[loops.loopCount()];
			for (int i = 0; i < this.turns.length; i++) {
				this.turns[i] = new Turn(i);
			}
		}
		else {
			this.turns = null;
		}
	}

	/**
	 * Writes {@code entry} to this node's storage; then exactly one of {@code onWritten}
	 * and {@code onFailed} runs (a {@link java.util.concurrent.TimeoutException} past the
	 * timeout). On a loop the write waits for the end of the turn that read its request:
	 * a request of {@code ack} 1 is answered then, a few microseconds later than alone,
	 * and the turn's writes cost one WAL write (a single node's PUT rate rose from about
	 * 0.85 to about 0.97 of the bare WebFlux server's, docs/performance.md).
	 */
	void upsert(Entry entry, Runnable onWritten, Consumer<Throwable> onFailed) {
		Turn[] turns = this.turns;
		int index = (turns != null) ? this.loops.currentIndex() : -1;
		if (turns == null || index < 0) {
			Deadline.subscribe(this.storage.upsert(entry), this.timeout, this.loops, (ignored) -> onWritten.run(),
					onFailed);
			return;
		}
		turns[index].add(new Pending(entry, onWritten, onFailed));
	}

	private record Pending(Entry entry, Runnable onWritten, Consumer<Throwable> onFailed) {

	}

	/** The writes of the current turn of one loop, written by a task run after it. */
	private final class Turn implements Runnable {

		private final int loop;

		private List<Pending> pending = new ArrayList<>();

		Turn(int loop) {
			this.loop = loop;
		}

		void add(Pending write) {
			this.pending.add(write);
			if (this.pending.size() > 1) {
				return; // the task is queued already
			}
			EventLoops.afterTurn(LocalWrites.this.loops.loop(this.loop), this);
		}

		@Override
		public void run() {
			List<Pending> group = this.pending;
			if (group.isEmpty()) {
				return;
			}
			// A fresh list before the storage call: its answers may come at
			// once, and what they trigger may write again.
			this.pending = new ArrayList<>();
			Storage storage = LocalWrites.this.storage;
			if (group.size() == 1) {
				Pending only = group.get(0);
				Deadline.subscribe(storage.upsert(only.entry()), LocalWrites.this.timeout, LocalWrites.this.loops,
						(ignored) -> only.onWritten().run(), only.onFailed());
				return;
			}
			List<Entry> entries = new ArrayList<>(group.size());
			for (Pending write : group) {
				entries.add(write.entry());
			}
			Deadline.subscribe(storage.upsertAll(entries), LocalWrites.this.timeout, LocalWrites.this.loops,
					(ignored) -> answerAll(group, null), (error) -> answerAll(group, error));
		}

		/**
		 * Answers every write of a group, each even if an earlier one's callback threw
		 * (the first such failure is thrown after all).
		 */
		private static void answerAll(List<Pending> group, @Nullable Throwable error) {
			RuntimeException first = null;
			for (Pending write : group) {
				try {
					if (error == null) {
						write.onWritten().run();
					}
					else {
						write.onFailed().accept(error);
					}
				}
				catch (RuntimeException ex) {
					if (first == null) {
						first = ex;
					}
					else {
						first.addSuppressed(ex);
					}
				}
			}
			if (first != null) {
				throw first;
			}
		}

	}

}
