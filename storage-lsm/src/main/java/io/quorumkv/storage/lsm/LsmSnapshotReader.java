package io.quorumkv.storage.lsm;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.atomic.AtomicBoolean;

import io.quorumkv.storage.CorruptedStorageException;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.io.FileIo;
import io.quorumkv.storage.lsm.iterator.EntryIterator;
import io.quorumkv.storage.lsm.manifest.Manifest;
import io.quorumkv.storage.lsm.sstable.SsTable;
import org.jspecify.annotations.Nullable;

/**
 * Reads the tables of an LSM snapshot (or of any closed data folder) without writing
 * anything: the manifest is read and checked, every table it names is mapped and its
 * footer, index, filter and properties checked, and each table's entries are read in key
 * order, every block's checksum verified as it is read. It is how a snapshot is verified
 * and how a restore reads it; the WAL segments of a data folder are not read.
 *
 * <pre>{@code
 * try (LsmSnapshotReader reader = LsmSnapshotReader.open(folder)) {
 *     for (Iterator<Entry> table : reader.tables()) { ... }
 * }
 * }</pre>
 */
public final class LsmSnapshotReader implements AutoCloseable {

	/** The format name of an LSM snapshot ({@code Snapshots#snapshotFormat}). */
	public static final String FORMAT = "lsm";

	private final List<SsTable> tables;

	private final AtomicBoolean closed = new AtomicBoolean();

	private LsmSnapshotReader(List<SsTable> tables) {
		this.tables = tables;
	}

	/**
	 * Opens the tables {@code dir}'s manifest names.
	 * @throws CorruptedStorageException naming the file when the manifest or a table is
	 * damaged
	 * @throws IOException when a file cannot be read (a table the manifest names is
	 * missing)
	 */
	public static LsmSnapshotReader open(Path dir) throws IOException {
		FileIo io = FileIo.real();
		Manifest manifest = Manifest.read(io, dir);
		if (manifest == null) {
			throw new IOException("no " + Manifest.FILE_NAME + " in " + dir + ": not an LSM snapshot");
		}
		List<SsTable> opened = new ArrayList<>();
		try {
			for (Manifest.TableRef ref : manifest.tables()) {
				opened.add(SsTable.open(io, DataFiles.table(dir, ref.number()), ref.number()));
			}
		}
		catch (IOException | RuntimeException ex) {
			opened.forEach(SsTable::release);
			throw ex;
		}
		return new LsmSnapshotReader(List.copyOf(opened));
	}

	/**
	 * Opens the loose table files {@code files} of {@code dir} (an incremental backup's
	 * tables, {@link IncrementalBackup}), with no manifest.
	 * @throws CorruptedStorageException naming the file when a table is damaged
	 * @throws IOException when a file cannot be read
	 */
	public static LsmSnapshotReader openTables(Path dir, List<String> files) throws IOException {
		FileIo io = FileIo.real();
		List<SsTable> opened = new ArrayList<>();
		try {
			for (String file : files) {
				long number = DataFiles.tableNumber(file);
				if (number < 0) {
					throw new IOException("not a table file name: " + dir.resolve(file));
				}
				opened.add(SsTable.open(io, dir.resolve(file), number));
			}
		}
		catch (IOException | RuntimeException ex) {
			opened.forEach(SsTable::release);
			throw ex;
		}
		return new LsmSnapshotReader(List.copyOf(opened));
	}

	/** The file names of the tables, in the manifest's order. */
	public List<String> tableFiles() {
		return this.tables.stream().map((t) -> t.path().getFileName().toString()).toList();
	}

	/**
	 * One iterator per table over its entries in key order (tombstones, and values with
	 * their expiry, as stored). Reading may throw {@link CorruptedStorageException}
	 * naming the table. Valid until {@link #close()}.
	 */
	public List<Iterator<Entry>> tables() {
		return this.tables.stream().map((t) -> (Iterator<Entry>) new TableEntries(t.iterator(new byte[0]))).toList();
	}

	/** Unmaps the tables; idempotent. */
	@Override
	public void close() {
		if (this.closed.compareAndSet(false, true)) {
			this.tables.forEach(SsTable::release);
		}
	}

	private static final class TableEntries implements Iterator<Entry> {

		private final EntryIterator cursor;

		TableEntries(EntryIterator cursor) {
			this.cursor = cursor;
		}

		@Override
		public boolean hasNext() {
			return this.cursor.current() != null;
		}

		@Override
		public Entry next() {
			@Nullable Entry entry = this.cursor.current();
			if (entry == null) {
				throw new NoSuchElementException();
			}
			this.cursor.next();
			return entry;
		}

	}

}
