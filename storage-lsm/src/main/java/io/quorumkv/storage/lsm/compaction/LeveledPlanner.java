package io.quorumkv.storage.lsm.compaction;

import java.util.List;
import java.util.Optional;

import io.quorumkv.storage.Keys;
import io.quorumkv.storage.lsm.sstable.SsTable;

/**
 * Leveled compaction (LevelDB/RocksDB style), chosen over size-tiered because the
 * workload is overwrite-heavy: leveling keeps one version of almost every key (space
 * amplification about 1.1 with a size multiplier of 10, bounded by level 0 plus the last
 * level's fraction of the total) and a lookup consults at most {@code L0 tables +
 * (levels - 1)} tables, at the price of more write amplification than tiering.
 *
 * <p>
 * The level with the highest score goes first: level 0 scores its table count over the
 * trigger, deeper levels their bytes over their target. Level 0 compacts all its tables
 * (they overlap) with the overlapping level-1 tables; a deeper level compacts one table,
 * chosen round-robin through the key space, with the overlapping tables below. The last
 * level is never pushed down. Pure logic apart from the round-robin pointers; one
 * compaction thread uses it.
 */
public final class LeveledPlanner {

	private final int level0Trigger;

	private final long[] targets;

	private final byte[][] pointers;

	public LeveledPlanner(int levels, int level0Trigger, java.util.function.IntToLongFunction target) {
		this.level0Trigger = level0Trigger;
		this.targets = new long[levels];
		this.pointers = new byte[levels][];
		for (int i = 1; i < levels; i++) {
			this.targets[i] = target.applyAsLong(i);
		}
	}

	/** The most urgent compaction, if any level is over its limit. */
	public Optional<CompactionTask> plan(Levels levels) {
		int best = -1;
		double bestScore = 1.0;
		for (int i = 0; i < levels.count() - 1; i++) {
			double score = score(levels, i);
			if (score >= bestScore) {
				best = i;
				bestScore = score;
			}
		}
		if (best < 0) {
			return Optional.empty();
		}
		if (best == 0) {
			List<SsTable> inputs = levels.level(0);
			return Optional.of(new CompactionTask(0, inputs, overlapping(levels, 1, inputs), 1));
		}
		SsTable chosen = pick(levels.level(best), this.pointers[best]);
		this.pointers[best] = chosen.maxKey();
		return Optional
			.of(new CompactionTask(best, List.of(chosen), overlapping(levels, best + 1, List.of(chosen)), best + 1));
	}

	/**
	 * Everything into the deepest non-empty level (at least level 1): a full compaction.
	 */
	public Optional<CompactionTask> planFull(Levels levels) {
		int deepest = 1;
		for (int i = 1; i < levels.count(); i++) {
			if (!levels.level(i).isEmpty()) {
				deepest = i;
			}
		}
		List<SsTable> all = levels.all();
		if (all.isEmpty()) {
			return Optional.empty();
		}
		List<SsTable> target = levels.level(deepest);
		List<SsTable> inputs = all.stream().filter((t) -> !target.contains(t)).toList();
		return Optional.of(new CompactionTask(0, inputs, target, deepest));
	}

	/** How far {@code level} is over its limit; at least 1 means it needs compaction. */
	public double score(Levels levels, int level) {
		if (level == 0) {
			return levels.level(0).size() / (double) this.level0Trigger;
		}
		return levels.bytes(level) / (double) this.targets[level];
	}

	/** Bytes over the limits, a rough measure of compaction debt. */
	public long pendingBytes(Levels levels) {
		long pending = (levels.level(0).size() >= this.level0Trigger) ? levels.bytes(0) : 0;
		for (int i = 1; i < levels.count() - 1; i++) {
			pending += Math.max(0, levels.bytes(i) - this.targets[i]);
		}
		return pending;
	}

	private static SsTable pick(List<SsTable> tables, byte[] pointer) {
		if (pointer != null) {
			for (SsTable t : tables) {
				if (Keys.compare(t.minKey(), pointer) > 0) {
					return t;
				}
			}
		}
		return tables.get(0);
	}

	private static List<SsTable> overlapping(Levels levels, int level, List<SsTable> inputs) {
		byte[] min = inputs.get(0).minKey();
		byte[] max = inputs.get(0).maxKey();
		for (SsTable t : inputs) {
			min = (Keys.compare(t.minKey(), min) < 0) ? t.minKey() : min;
			max = (Keys.compare(t.maxKey(), max) > 0) ? t.maxKey() : max;
		}
		return levels.overlapping(level, min, max);
	}

}
