package io.quorumkv.storage.lsm;

import java.util.ArrayList;
import java.util.List;

import io.quorumkv.storage.lsm.compaction.Levels;

/**
 * The engine's structure at one moment, immutable and replaced whole (under the engine's
 * state lock): the active memtable, the frozen ones waiting for their flush (newest
 * first), and the tables by level. Readers take one reference and never block.
 */
record LsmState(MemTableSlot active, List<MemTableSlot> immutables, Levels levels) {

	LsmState {
		immutables = List.copyOf(immutables);
	}

	/** {@code next} becomes active; the active memtable is frozen at {@code time}. */
	LsmState withActive(MemTableSlot next, long time) {
		List<MemTableSlot> frozen = new ArrayList<>(this.immutables.size() + 1);
		frozen.add(this.active.frozen(time));
		frozen.addAll(this.immutables);
		return new LsmState(next, frozen, this.levels);
	}

	LsmState withoutImmutable(MemTableSlot flushed) {
		return new LsmState(this.active, this.immutables.stream().filter((s) -> s != flushed).toList(), this.levels);
	}

	LsmState withLevels(Levels next) {
		return new LsmState(this.active, this.immutables, next);
	}

	/** Memtables newest first: the active one, then the frozen ones. */
	List<MemTableSlot> memtables() {
		List<MemTableSlot> all = new ArrayList<>(this.immutables.size() + 1);
		all.add(this.active);
		all.addAll(this.immutables);
		return all;
	}

	/** The oldest WAL segment whose writes are not yet in a table. */
	long minLiveWal() {
		return this.immutables.isEmpty() ? this.active.firstSegment() : this.immutables.getLast().firstSegment();
	}

}
