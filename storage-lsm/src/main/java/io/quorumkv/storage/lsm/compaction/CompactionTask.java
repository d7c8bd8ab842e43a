package io.quorumkv.storage.lsm.compaction;

import java.util.ArrayList;
import java.util.List;

import io.quorumkv.storage.lsm.sstable.SsTable;

/**
 * One compaction: {@code inputs} of {@code level} merged with the {@code overlapping}
 * tables of {@code outputLevel}. A trivial move (one input, nothing overlapping) only
 * changes the table's level in the manifest.
 */
public record CompactionTask(int level, List<SsTable> inputs, List<SsTable> overlapping, int outputLevel) {

	public CompactionTask {
		inputs = List.copyOf(inputs);
		overlapping = List.copyOf(overlapping);
	}

	public List<SsTable> all() {
		List<SsTable> all = new ArrayList<>(this.inputs);
		all.addAll(this.overlapping);
		return all;
	}

	public boolean isTrivialMove() {
		return this.inputs.size() == 1 && this.overlapping.isEmpty() && this.level != this.outputLevel;
	}

	public long inputBytes() {
		return all().stream().mapToLong(SsTable::fileSize).sum();
	}

}
