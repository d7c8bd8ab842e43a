package io.quorumkv.storage.lsm.iterator;

import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;

/**
 * A cursor over entries in key order: {@link #current()} is the entry under the cursor,
 * {@code null} once exhausted. Reading may throw
 * {@link io.quorumkv.storage.CorruptedStorageException}.
 */
public interface EntryIterator extends AutoCloseable {

	@Nullable Entry current();

	/** Moves to the next entry. */
	void next();

	@Override
	default void close() {
	}

	/** The entries of {@code entries}, in key order, whose key {@code keys} accepts. */
	static EntryIterator of(java.util.Iterator<Entry> entries, java.util.function.Predicate<byte[]> keys) {
		EntryIterator all = of(entries);
		return new EntryIterator() {

			{
				skipRejected();
			}

			private void skipRejected() {
				for (Entry e = all.current(); e != null && !keys.test(e.key()); e = all.current()) {
					all.next();
				}
			}

			@Override
			public @Nullable Entry current() {
				return all.current();
			}

			@Override
			public void next() {
				all.next();
				skipRejected();
			}

		};
	}

	/** An iterator over a {@link java.util.Iterator} already in key order. */
	static EntryIterator of(java.util.Iterator<Entry> entries) {
		return new EntryIterator() {

			private @Nullable Entry current = entries.hasNext() ? entries.next() : null;

			@Override
			public @Nullable Entry current() {
				return this.current;
			}

			@Override
			public void next() {
				this.current = entries.hasNext() ? entries.next() : null;
			}

		};
	}

}
