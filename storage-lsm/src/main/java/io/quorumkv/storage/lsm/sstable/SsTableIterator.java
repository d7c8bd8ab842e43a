package io.quorumkv.storage.lsm.sstable;

import java.util.List;
import java.util.function.Predicate;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.iterator.EntryIterator;
import org.jspecify.annotations.Nullable;

/**
 * Walks a pinned table from a key on, decoding (and verifying) one block at a time, and
 * only the entries whose key a predicate accepts.
 */
final class SsTableIterator implements EntryIterator {

	private final SsTable table;

	private int blockIndex;

	private List<Entry> entries;

	private int position;

	private final Predicate<byte[]> keys;

	SsTableIterator(SsTable table, byte[] from, Predicate<byte[]> keys) {
		this.table = table;
		this.keys = keys;
		this.blockIndex = table.blockIndexFor(from);
		this.entries = (this.blockIndex < table.blockCount())
				? table.withBlock(this.blockIndex, false, (block) -> block.entriesFrom(from, keys)) : List.of();
		skipEmpty();
	}

	private void skipEmpty() {
		while (this.position >= this.entries.size() && this.blockIndex + 1 < this.table.blockCount()) {
			this.blockIndex++;
			this.entries = this.table.withBlock(this.blockIndex, false, (block) -> block.entries(this.keys));
			this.position = 0;
		}
	}

	@Override
	public @Nullable Entry current() {
		return (this.position < this.entries.size()) ? this.entries.get(this.position) : null;
	}

	@Override
	public void next() {
		this.position++;
		skipEmpty();
	}

}
