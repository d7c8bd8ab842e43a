package io.quorumkv.service.backup;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

import io.quorumkv.storage.lsm.IncrementalBackup;
import io.quorumkv.storage.lsm.LsmSnapshotReader;
import org.jspecify.annotations.Nullable;

/**
 * The incremental tables brought beside a node's LSM snapshot: the files of the node's
 * {@code <data>/backups/}, copied into {@value #FOLDER}/ of its snapshot folder. Every
 * table is checked against its record ({@link IncrementalBackup}: size and CRC32C), and
 * the records are chained from the snapshot's base ({@code data/BACKUP-BASE}, the last
 * table flushed before its links): a table at or below the base is in the snapshot
 * already and is left out; each later one must name the one before as its
 * {@code previous}. The chain stops at the first gap (a flush whose link failed, or a
 * file not copied), and the set reaches as far as its last link: the freeze of that
 * table's memtable, by when every write the node took is in the snapshot or the chain.
 *
 * @param tables the tables of the chain, oldest first (file names in {@link #FOLDER})
 * @param reach the time up to which the snapshot and the chain hold every write the node
 * took: the newest chained table's freeze, or the snapshot's time when none is later
 * @param gap why the chain stops before the newest table, or null
 * @param wal the WAL segments linked beside the tables ({@link WalLinks}), which make a
 * time between two flushes exact
 */
record Incrementals(List<String> tables, long reach, @Nullable String gap, WalLinks wal) {

	/** The folder of the incremental tables in a node's snapshot folder. */
	static final String FOLDER = "incremental";

	Incrementals {
		tables = List.copyOf(tables);
	}

	/**
	 * Checks the incremental tables of the snapshot folder {@code dir} (none when it has
	 * no {@value #FOLDER}/).
	 * @throws SnapshotException naming the file at fault
	 */
	static Incrementals check(Path dir, SnapshotManifest manifest) {
		Path folder = dir.resolve(FOLDER);
		if (!Files.isDirectory(folder)) {
			return new Incrementals(List.of(), manifest.asOf(), null, WalLinks.NONE);
		}
		if (!manifest.format().equals(LsmSnapshotReader.FORMAT)) {
			throw new SnapshotException(folder + ": incremental tables go with an LSM snapshot, and " + dir
					+ " is a snapshot of the " + manifest.backend() + " backend");
		}
		List<IncrementalBackup> records = records(folder);
		OptionalLong base;
		try {
			base = IncrementalBackup.readBase(dir.resolve(SnapshotManifest.DATA));
		}
		catch (IOException ex) {
			throw new SnapshotException(ex.getMessage(), ex);
		}
		if (base.isEmpty()) {
			if (records.isEmpty()) {
				return new Incrementals(List.of(), manifest.asOf(), null, WalLinks.check(dir));
			}
			throw new SnapshotException(dir + " was taken without incremental backups on (no " + SnapshotManifest.DATA
					+ "/" + IncrementalBackup.BASE_FILE + "): the tables in " + folder + " cannot be chained to it");
		}
		Set<Long> chained = new HashSet<>();
		chained.add(base.getAsLong());
		List<String> tables = new ArrayList<>();
		long reach = manifest.asOf();
		String gap = null;
		for (IncrementalBackup record : records) {
			if (record.number() <= base.getAsLong()) {
				continue;
			}
			if (!chained.contains(record.previous())) {
				gap = "the table flushed before " + folder.resolve(record.table()) + " (number " + record.previous()
						+ ") is not in " + folder + ": its link failed, or it was not copied";
				break;
			}
			chained.add(record.number());
			tables.add(record.table());
			reach = Math.max(reach, record.frozenAt());
		}
		return new Incrementals(tables, reach, gap, WalLinks.check(dir));
	}

	/** The records of {@code folder}, each table checked against its record. */
	private static List<IncrementalBackup> records(Path folder) {
		List<IncrementalBackup> records;
		try {
			records = IncrementalBackup.list(folder);
		}
		catch (IOException ex) {
			throw new SnapshotException(ex.getMessage(), ex);
		}
		Map<String, IncrementalBackup> byTable = new HashMap<>();
		for (IncrementalBackup record : records) {
			byTable.put(record.table(), record);
			Path table = folder.resolve(record.table());
			try {
				long size = Files.size(table);
				if (size != record.size()) {
					throw new SnapshotException(
							"file " + table + " has " + size + " bytes; its record says " + record.size());
				}
				long crc = IncrementalBackup.crc32c(table);
				if (crc != record.crc32c()) {
					throw new SnapshotException(
							"file " + table + " is damaged: its CRC32C is " + String.format("%08x", crc)
									+ ", its record says " + String.format("%08x", record.crc32c()));
				}
			}
			catch (NoSuchFileException ex) {
				throw new SnapshotException(
						"file " + table + " is missing (its record is " + record.recordFile() + ")");
			}
			catch (IOException ex) {
				throw new SnapshotException("file " + table + " cannot be read: " + ex.getMessage(), ex);
			}
		}
		// wal/, the WAL segments' links, is checked by WalLinks.
		SnapshotFiles.checkEveryFileRecorded(folder, byTable.keySet(), "an incremental table");
		return records;
	}

}
