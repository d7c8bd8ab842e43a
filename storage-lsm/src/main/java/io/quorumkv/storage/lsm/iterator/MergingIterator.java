package io.quorumkv.storage.lsm.iterator;

import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import io.quorumkv.storage.Keys;
import org.jspecify.annotations.Nullable;

/**
 * Lazily merges sources into one stream with one entry per key, the greatest by
 * {@link EntryOrder} (newest-wins is by timestamp, never by source age). A heap orders
 * the sources by their current key, then by entry descending, then by ordinal (exact
 * ties); the top is emitted and every other source positioned on the same key is advanced
 * past it.
 *
 * <p>
 * After the first error the iterator is poisoned: it rethrows it on every call, so a
 * caller cannot read past damage.
 */
public final class MergingIterator implements EntryIterator {

	private static final Comparator<Source> ORDER = Comparator
		.<Source, byte[]>comparing((s) -> current(s).key(), Keys.ORDER)
		.thenComparing((s) -> current(s), EntryOrder.INSTANCE.reversed())
		.thenComparingInt(Source::ordinal);

	private final PriorityQueue<Source> heap = new PriorityQueue<>(ORDER);

	private final List<EntryIterator> sources;

	private @Nullable Entry current;

	private @Nullable RuntimeException failure;

	public MergingIterator(List<EntryIterator> sources) {
		this.sources = List.copyOf(sources);
		try {
			for (int i = 0; i < this.sources.size(); i++) {
				if (this.sources.get(i).current() != null) {
					this.heap.add(new Source(this.sources.get(i), i));
				}
			}
			advance();
		}
		catch (RuntimeException ex) {
			this.failure = ex;
			throw ex;
		}
	}

	private static Entry current(Source source) {
		Entry entry = source.iterator.current();
		assert entry != null : "exhausted sources leave the heap";
		return entry;
	}

	@Override
	public @Nullable Entry current() {
		if (this.failure != null) {
			throw this.failure;
		}
		return this.current;
	}

	@Override
	public void next() {
		if (this.failure != null) {
			throw this.failure;
		}
		try {
			advance();
		}
		catch (RuntimeException ex) {
			this.failure = ex;
			throw ex;
		}
	}

	private void advance() {
		Source top = this.heap.poll();
		if (top == null) {
			this.current = null;
			return;
		}
		Entry winner = current(top);
		step(top);
		while (!this.heap.isEmpty() && Keys.compare(current(this.heap.peek()).key(), winner.key()) == 0) {
			step(this.heap.poll());
		}
		this.current = winner;
	}

	private void step(Source source) {
		source.iterator.next();
		if (source.iterator.current() != null) {
			this.heap.add(source);
		}
	}

	@Override
	public void close() {
		RuntimeException first = null;
		for (EntryIterator source : this.sources) {
			try {
				source.close();
			}
			catch (RuntimeException ex) {
				first = (first != null) ? first : ex;
			}
		}
		if (first != null) {
			throw first;
		}
	}

	private record Source(EntryIterator iterator, int ordinal) {
	}

}
