package io.quorumkv.service.backup;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;

import io.quorumkv.storage.CorruptedStorageException;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import io.quorumkv.storage.Keys;
import io.quorumkv.storage.lsm.WalBackup;
import org.jspecify.annotations.Nullable;

/**
 * The WAL segments brought beside a node's LSM snapshot: the links of the node's
 * {@code <data>/backups/wal/}, copied with its incremental tables into
 * {@code incremental/wal/}. They hold every version the node wrote, where a flushed table
 * holds one per key and memtable, so a restore as of a time between two flushes finds the
 * version a later write overwrote in the memtable.
 *
 * <p>
 * The records ({@link WalBackup}) are chained from the snapshot's base: the oldest
 * segment its manifest still needed ({@code minLiveWal}), since every write not in the
 * snapshot's tables is in a segment numbered from it on. A segment below it is left out;
 * the first from it on may name any segment below as the one before, and each later one
 * must name the one before it. The chain stops at the first gap (a link that failed, or a
 * file not copied), as the tables' does. Every chained segment is read with the WAL's own
 * reader, every record's checksums verified; a torn last record (a copy made while the
 * node appended) is accepted only in the newest segment holding records, and anything
 * else that fails a check is damage, named with its file and offset.
 *
 * @param segments the chained segments, oldest first
 * @param records the whole records they hold
 * @param gap why the chain stops before the newest segment, or null
 */
record WalLinks(List<Path> segments, long records, @Nullable String gap) {

	static final WalLinks NONE = new WalLinks(List.of(), 0, null);

	WalLinks {
		segments = List.copyOf(segments);
	}

	/**
	 * Checks the WAL links of the LSM snapshot folder {@code dir} (none without
	 * {@code incremental/wal/}).
	 * @throws SnapshotException naming the file at fault
	 */
	static WalLinks check(Path dir) {
		Path folder = dir.resolve(Incrementals.FOLDER).resolve(WalBackup.FOLDER);
		if (!Files.isDirectory(folder)) {
			return NONE;
		}
		long base = base(dir.resolve(SnapshotManifest.DATA));
		List<WalBackup> records = records(folder);
		List<Path> chained = new ArrayList<>();
		String gap = null;
		long previous = Long.MIN_VALUE;
		for (WalBackup record : records) {
			if (record.number() < base) {
				continue;
			}
			boolean linked = (previous == Long.MIN_VALUE) ? record.previous() < base : record.previous() == previous;
			if (!linked) {
				gap = "the WAL segment created before " + folder.resolve(record.segment()) + " (number "
						+ record.previous() + ") is not in " + folder + ": its link failed, or it was not copied";
				break;
			}
			chained.add(folder.resolve(record.segment()));
			previous = record.number();
		}
		long total = 0;
		boolean laterHoldsRecords = false;
		// Newest first: a torn tail is a copy's last write only with nothing after it.
		for (Path segment : chained.reversed()) {
			WalBackup.Scan scan = scan(segment, (entry) -> {
			});
			if (scan.tornTail() && laterHoldsRecords) {
				throw new SnapshotException("file " + segment + " is damaged: its record at offset "
						+ scan.validLength() + " is torn, and a later WAL segment holds records");
			}
			laterHoldsRecords |= scan.records() > 0 || scan.tornTail();
			total += scan.records();
		}
		return new WalLinks(chained, total, gap);
	}

	/**
	 * The WAL segments an LSM snapshot linked of the memtables it froze
	 * ({@code data/wal/} of the snapshot folder {@code dir}; none in a snapshot taken
	 * before them, or of another backend): every version written to those memtables, the
	 * ones a newer write overwrote in the memtable before the freeze too, so that a
	 * restore as of the snapshot's time finds the version a key had then. Their bytes are
	 * checked against the snapshot's manifest with every other file.
	 */
	static WalLinks frozen(Path dir) {
		Path folder = dir.resolve(SnapshotManifest.DATA).resolve(io.quorumkv.storage.lsm.LsmStorage.WAL_SEGMENTS);
		if (!Files.isDirectory(folder)) {
			return NONE;
		}
		try (java.util.stream.Stream<Path> files = Files.list(folder)) {
			List<Path> segments = files.filter(Files::isRegularFile).sorted().toList();
			return new WalLinks(segments, 0, null);
		}
		catch (IOException ex) {
			throw new SnapshotException("cannot list " + folder + ": " + ex.getMessage(), ex);
		}
	}

	/**
	 * The newest version at or before {@code time} of every key the segments hold, in key
	 * order (versions and tombstones as written, expiries included). Holds them in
	 * memory: one version per key written since the snapshot's base.
	 */
	Iterator<Entry> asOf(long time) {
		TreeMap<byte[], Entry> newest = new TreeMap<>(Keys.ORDER);
		for (Path segment : this.segments) {
			scan(segment, (entry) -> {
				if (entry.timestamp() <= time) {
					newest.merge(entry.key(), entry, (a, b) -> EntryOrder.max(a, b));
				}
			});
		}
		return newest.values().iterator();
	}

	/**
	 * Removes from the node's {@code backups/wal/} every segment below the snapshot's
	 * base: their writes are in the snapshot's tables. The record goes first: a link left
	 * alone by a crash is removed when the store opens again.
	 * @param backups the node's {@code <data>/backups/}
	 * @param snapshotData the snapshot's {@code data/} folder
	 */
	static Pruned prune(Path backups, Path snapshotData) throws IOException {
		Path folder = backups.resolve(WalBackup.FOLDER);
		long base = base(snapshotData);
		int removed = 0;
		int kept = 0;
		for (WalBackup record : WalBackup.list(folder)) {
			if (record.number() < base) {
				Files.deleteIfExists(folder.resolve(record.recordFile()));
				Files.deleteIfExists(folder.resolve(record.segment()));
				removed++;
			}
			else {
				kept++;
			}
		}
		return new Pruned(removed, kept);
	}

	/**
	 * What {@link #prune} did.
	 *
	 * @param removed segments removed (each with its record)
	 * @param kept segments kept: from the snapshot's base on
	 */
	record Pruned(int removed, int kept) {
	}

	/** The oldest segment the snapshot's manifest still needed. */
	private static long base(Path data) {
		try {
			return WalBackup.base(data);
		}
		catch (CorruptedStorageException ex) {
			throw new SnapshotException("snapshot " + data + " is damaged: " + ex.getMessage(), ex);
		}
		catch (IOException ex) {
			throw new SnapshotException("the manifest of " + data + " cannot be read: " + ex.getMessage(), ex);
		}
	}

	private static WalBackup.Scan scan(Path segment, Consumer<Entry> sink) {
		try {
			return WalBackup.scan(segment, sink);
		}
		catch (CorruptedStorageException ex) {
			throw new SnapshotException("file " + segment + " is damaged: " + ex.getMessage(), ex);
		}
		catch (IOException ex) {
			throw new SnapshotException("file " + segment + " cannot be read: " + ex.getMessage(), ex);
		}
	}

	/** The records of {@code folder}, each with its segment, and no file without one. */
	private static List<WalBackup> records(Path folder) {
		List<WalBackup> records;
		try {
			records = WalBackup.list(folder);
		}
		catch (IOException ex) {
			throw new SnapshotException(ex.getMessage(), ex);
		}
		Set<String> segments = new HashSet<>();
		for (WalBackup record : records) {
			segments.add(record.segment());
			if (!Files.isRegularFile(folder.resolve(record.segment()))) {
				throw new SnapshotException("file " + folder.resolve(record.segment()) + " is missing (its record is "
						+ record.recordFile() + ")");
			}
		}
		SnapshotFiles.checkEveryFileRecorded(folder, segments, "a linked WAL segment");
		return records;
	}

}
