package io.quorumkv.service.backup;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.PriorityQueue;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Keys;

/**
 * A k-way merge of sources each in key order (the tables of every node of a snapshot set)
 * into one group per key: all the versions of the key the sources hold. Memory: one entry
 * per source and the versions of one key.
 */
final class VersionMerge implements Iterator<List<Entry>> {

	private final PriorityQueue<Source> heap = new PriorityQueue<>(
			(a, b) -> Keys.ORDER.compare(a.current.key(), b.current.key()));

	VersionMerge(List<Iterator<Entry>> sources) {
		for (Iterator<Entry> source : sources) {
			if (source.hasNext()) {
				this.heap.add(new Source(source, source.next()));
			}
		}
	}

	@Override
	public boolean hasNext() {
		return !this.heap.isEmpty();
	}

	/** The versions of the next key, in no particular order. */
	@Override
	public List<Entry> next() {
		Source first = this.heap.peek();
		if (first == null) {
			throw new NoSuchElementException();
		}
		byte[] key = first.current.key();
		List<Entry> versions = new ArrayList<>(4);
		while (!this.heap.isEmpty() && Keys.ORDER.compare(this.heap.peek().current.key(), key) == 0) {
			Source source = this.heap.poll();
			versions.add(source.current);
			if (source.entries.hasNext()) {
				Entry next = source.entries.next();
				if (Keys.ORDER.compare(next.key(), key) < 0) {
					throw new SnapshotException("a table of the snapshot is out of key order");
				}
				source.current = next;
				this.heap.add(source);
			}
		}
		return versions;
	}

	private static final class Source {

		final Iterator<Entry> entries;

		Entry current;

		Source(Iterator<Entry> entries, Entry current) {
			this.entries = entries;
			this.current = current;
		}

	}

}
