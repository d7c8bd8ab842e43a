package io.quorumkv.service.ops;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import io.quorumkv.storage.StorageStats;
import org.jspecify.annotations.Nullable;

/**
 * The storage's {@link StorageStats} for operators: every counter and gauge, and what
 * they allow to derive (for the LSM: memtable, tables per level, compaction debt, write
 * amplification).
 */
final class StorageView {

	private StorageView() {
	}

	static Map<String, @Nullable Object> of(StorageStats stats) {
		Map<String, @Nullable Object> view = new LinkedHashMap<>();
		view.put("backend", stats.backend());
		view.put("healthy", stats.healthy());
		view.put("failure", stats.failure());
		view.put("derived", derived(stats));
		view.put("counters", new TreeMap<>(stats.counters()));
		view.put("gauges", new TreeMap<>(stats.gauges()));
		return view;
	}

	/** Only what the backend's stats allow; absent inputs leave the value out. */
	static Map<String, Object> derived(StorageStats stats) {
		Map<String, Long> counters = stats.counters();
		Map<String, Long> gauges = stats.gauges();
		Map<String, Object> derived = new LinkedHashMap<>();
		copy(gauges, "memtable.bytes", derived, "memtableBytes");
		copy(gauges, "memtables.immutable", derived, "immutableMemtables");
		List<Map<String, Long>> levels = new ArrayList<>();
		for (int level = 0; gauges.containsKey("tables.level." + level); level++) {
			levels.add(Map.of("level", (long) level, "tables", gauges.get("tables.level." + level)));
		}
		if (!levels.isEmpty()) {
			derived.put("levels", levels);
		}
		copy(gauges, "tables", derived, "tables");
		copy(gauges, "disk.bytes", derived, "diskBytes");
		copy(gauges, "compaction.pending.bytes", derived, "pendingCompactionBytes");
		Double amplification = writeAmplification(counters);
		if (amplification != null) {
			derived.put("writeAmplification", amplification);
		}
		return derived;
	}

	/**
	 * The rows of {@code qkv storage}: what {@link #derived} shows, then every counter
	 * and every gauge it did not already show, each once, by name.
	 */
	static Map<String, Object> rows(StorageStats stats) {
		Map<String, Object> rows = new LinkedHashMap<>();
		derived(stats).forEach((name, value) -> {
			if (value instanceof List<?> levels) {
				for (Object level : levels) {
					Map<?, ?> entry = (Map<?, ?>) level;
					rows.put("tables in level " + entry.get("level"), entry.get("tables"));
				}
			}
			else {
				rows.put(name, value);
			}
		});
		new TreeMap<>(stats.counters()).forEach(rows::putIfAbsent);
		new TreeMap<>(stats.gauges()).forEach((name, value) -> {
			if (!COPIED_GAUGES.contains(name) && !name.startsWith("tables.level.")) {
				rows.putIfAbsent(name, value);
			}
		});
		return rows;
	}

	/** The gauges {@link #derived} shows under a name of its own. */
	private static final Set<String> COPIED_GAUGES = Set.of("memtable.bytes", "memtables.immutable", "tables",
			"disk.bytes", "compaction.pending.bytes");

	/**
	 * Bytes the engine wrote to tables (flushes and compactions) per byte logged to the
	 * WAL: the LSM keeps no count of upserted payload bytes, and the WAL bytes are that
	 * plus a few bytes of framing per record, so this slightly understates it. Null
	 * before the first flush or without the counters.
	 */
	static @Nullable Double writeAmplification(Map<String, Long> counters) {
		Long flushed = counters.get("flush.bytes");
		Long compacted = counters.get("compaction.bytes.written");
		Long logged = counters.get("wal.bytes");
		if (flushed == null || compacted == null || logged == null || logged == 0 || flushed == 0) {
			return null;
		}
		return Math.round((flushed + compacted) * 1000.0 / logged) / 1000.0;
	}

	private static void copy(Map<String, Long> from, String name, Map<String, Object> to, String as) {
		Long value = from.get(name);
		if (value != null) {
			to.put(as, value);
		}
	}

}
