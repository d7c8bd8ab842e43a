package io.quorumkv.storage.lsm.iterator;

import java.util.List;
import java.util.function.Function;

import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;

/**
 * Concatenates sources whose key ranges do not overlap and are in key order (the tables
 * of one level), opening each only when the previous one is exhausted.
 */
public final class ConcatIterator<T> implements EntryIterator {

	private final List<T> parts;

	private final Function<T, EntryIterator> opener;

	private int index;

	private @Nullable EntryIterator open;

	public ConcatIterator(List<T> parts, Function<T, EntryIterator> opener) {
		this.parts = List.copyOf(parts);
		this.opener = opener;
		skipExhausted();
	}

	private void skipExhausted() {
		while ((this.open == null || this.open.current() == null) && this.index < this.parts.size()) {
			if (this.open != null) {
				this.open.close();
			}
			this.open = this.opener.apply(this.parts.get(this.index++));
		}
	}

	@Override
	public @Nullable Entry current() {
		return (this.open != null) ? this.open.current() : null;
	}

	@Override
	public void next() {
		if (this.open != null) {
			this.open.next();
			skipExhausted();
		}
	}

	@Override
	public void close() {
		if (this.open != null) {
			this.open.close();
			this.open = null;
		}
	}

}
