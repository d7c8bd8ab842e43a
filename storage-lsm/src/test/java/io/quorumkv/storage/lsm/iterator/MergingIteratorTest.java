package io.quorumkv.storage.lsm.iterator;

import static io.quorumkv.storage.contract.Entries.delete;
import static io.quorumkv.storage.contract.Entries.put;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;

import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

class MergingIteratorTest {

	private static List<Entry> drain(EntryIterator it) {
		List<Entry> out = new ArrayList<>();
		for (Entry e = it.current(); e != null; it.next(), e = it.current()) {
			out.add(e);
		}
		return out;
	}

	private static EntryIterator of(Entry... entries) {
		return EntryIterator.of(List.of(entries).iterator());
	}

	@Test
	void mergesInKeyOrderKeepingTheGreatestVersionWhateverTheSource() {
		EntryIterator newerSource = of(put("a", "1", 1), put("c", "old", 5));
		EntryIterator olderSource = of(put("b", "2", 1), put("c", "new", 9), delete("d", 3));
		EntryIterator third = of(put("c", "tie-low", 9), put("d", "v", 3), put("e", "5", 1));
		assertThat(drain(new MergingIterator(List.of(newerSource, olderSource, third)))).containsExactly(
				put("a", "1", 1), put("b", "2", 1), put("c", "tie-low", 9), delete("d", 3), put("e", "5", 1));
	}

	@Test
	void handlesEmptySources() {
		assertThat(drain(new MergingIterator(List.of(of(), of(put("a", "1", 1)), of())))).hasSize(1);
		assertThat(drain(new MergingIterator(List.of()))).isEmpty();
	}

	@Test
	void concatenatesDisjointRuns() {
		List<List<Entry>> runs = List.of(List.of(put("a", "1", 1)), List.of(),
				List.of(put("b", "2", 1), put("c", "3", 1)));
		assertThat(drain(new ConcatIterator<>(runs, (run) -> EntryIterator.of(run.iterator())))).hasSize(3);
	}

	@Test
	void isPoisonedAfterAnError() {
		EntryIterator failing = new EntryIterator() {

			private int calls;

			@Override
			public @Nullable Entry current() {
				return put("k" + this.calls, "v", 1);
			}

			@Override
			public void next() {
				if (++this.calls == 2) {
					throw new IllegalStateException("boom");
				}
			}

		};
		MergingIterator merged = new MergingIterator(List.of(failing));
		assertThatThrownBy(merged::next).hasMessage("boom");
		assertThatThrownBy(merged::current).hasMessage("boom");
	}

}
