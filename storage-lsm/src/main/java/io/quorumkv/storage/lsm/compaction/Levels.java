package io.quorumkv.storage.lsm.compaction;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.quorumkv.storage.Keys;
import io.quorumkv.storage.lsm.sstable.SsTable;

/**
 * The live tables by level, immutable. Level 0 holds whole flushed memtables, newest
 * first, whose key ranges may overlap; every deeper level is one sorted run: tables
 * ordered by key with disjoint ranges, so a lookup consults at most one table there.
 */
public record Levels(List<List<SsTable>> levels) {

	public Levels {
		List<List<SsTable>> copy = new ArrayList<>();
		for (List<SsTable> level : levels) {
			copy.add(List.copyOf(level));
		}
		levels = Collections.unmodifiableList(copy);
	}

	public static Levels empty(int count) {
		List<List<SsTable>> levels = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			levels.add(List.of());
		}
		return new Levels(levels);
	}

	public int count() {
		return this.levels.size();
	}

	public List<SsTable> level(int i) {
		return this.levels.get(i);
	}

	/** A newly flushed table, in front of level 0. */
	public Levels withFlushed(SsTable table) {
		List<List<SsTable>> next = new ArrayList<>(this.levels);
		List<SsTable> l0 = new ArrayList<>(this.levels.get(0));
		l0.add(0, table);
		next.set(0, l0);
		return new Levels(next);
	}

	/** A table placed at {@code level} (recovery); deeper levels are kept sorted. */
	public Levels withTable(int level, SsTable table) {
		List<List<SsTable>> next = new ArrayList<>(this.levels);
		List<SsTable> tables = new ArrayList<>(this.levels.get(level));
		tables.add(table);
		if (level > 0) {
			tables.sort(Comparator.comparing(SsTable::minKey, Keys.ORDER));
		}
		else {
			tables.sort(Comparator.comparingLong(SsTable::number).reversed());
		}
		next.set(level, tables);
		return new Levels(next);
	}

	/** The levels after {@code task}: its tables replaced by {@code outputs}. */
	public Levels apply(CompactionTask task, List<SsTable> outputs) {
		Set<SsTable> removed = new HashSet<>(task.all());
		List<List<SsTable>> next = new ArrayList<>();
		for (List<SsTable> level : this.levels) {
			next.add(level.stream().filter((t) -> !removed.contains(t)).toList());
		}
		List<SsTable> target = new ArrayList<>(next.get(task.outputLevel()));
		target.addAll(outputs);
		target.sort(Comparator.comparing(SsTable::minKey, Keys.ORDER));
		next.set(task.outputLevel(), target);
		return new Levels(next);
	}

	public List<SsTable> all() {
		return this.levels.stream().flatMap(List::stream).toList();
	}

	public long bytes(int level) {
		return this.levels.get(level).stream().mapToLong(SsTable::fileSize).sum();
	}

	/** Tables of {@code level} whose key range meets {@code [min, max]}. */
	public List<SsTable> overlapping(int level, byte[] min, byte[] max) {
		return this.levels.get(level)
			.stream()
			.filter((t) -> Keys.compare(t.maxKey(), min) >= 0 && Keys.compare(t.minKey(), max) <= 0)
			.toList();
	}

}
