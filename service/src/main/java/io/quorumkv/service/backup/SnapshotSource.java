package io.quorumkv.service.backup;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Iterator;
import java.util.List;

import io.quorumkv.storage.CorruptedStorageException;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.derby.DerbyStorage;
import io.quorumkv.storage.h2.H2Storage;
import io.quorumkv.storage.lsm.LsmSnapshotReader;
import org.jspecify.annotations.Nullable;

/**
 * The entries of a node's snapshot, whatever its backend's format, as sources in key
 * order: an LSM snapshot's tables read in place ({@link LsmSnapshotReader}, nothing
 * written); an H2 or Derby backup opened as a store on a copy in a temporary folder
 * (those engines write into a database they open), scanned, and deleted on
 * {@link #close()}. Blocking: read it off the event loops.
 */
abstract class SnapshotSource implements AutoCloseable {

	/** The sources, each in key order; valid until {@link #close()}. */
	abstract List<Iterator<Entry>> tables();

	@Override
	public abstract void close();

	/**
	 * Opens the snapshot folder {@code dir} (its files already checked) with the
	 * incremental tables {@code incremental} of its {@link Incrementals#FOLDER} (LSM
	 * only).
	 * @throws SnapshotException when the format is unknown or a file is damaged
	 */
	static SnapshotSource open(Path dir, SnapshotManifest manifest, List<String> incremental) {
		Path data = dir.resolve(SnapshotManifest.DATA);
		try {
			return switch (manifest.format()) {
				case LsmSnapshotReader.FORMAT -> lsm(data, dir.resolve(Incrementals.FOLDER), incremental);
				case H2Storage.SNAPSHOT_FORMAT ->
					copied(dir, "h2", (work) -> H2Storage.openSnapshot(data, work, Clock.systemUTC()));
				case DerbyStorage.SNAPSHOT_FORMAT ->
					copied(dir, "derby", (work) -> DerbyStorage.openSnapshot(data, work, Clock.systemUTC()));
				default -> throw new SnapshotException(
						"snapshot " + dir + " is in format " + manifest.format() + ", which this version cannot read");
			};
		}
		catch (CorruptedStorageException ex) {
			throw new SnapshotException("snapshot " + dir + " is damaged: " + ex.getMessage(), ex);
		}
		catch (IOException | RuntimeException ex) {
			if (ex instanceof SnapshotException snapshot) {
				throw snapshot;
			}
			throw new SnapshotException("snapshot " + dir + " cannot be read: " + ex.getMessage(), ex);
		}
	}

	@FunctionalInterface
	private interface Opener {

		Storage open(Path work) throws IOException;

	}

	private static SnapshotSource lsm(Path data, Path folder, List<String> incremental) throws IOException {
		LsmSnapshotReader snapshot = LsmSnapshotReader.open(data);
		try {
			return new Lsm(snapshot, incremental.isEmpty() ? null : LsmSnapshotReader.openTables(folder, incremental));
		}
		catch (IOException | RuntimeException ex) {
			snapshot.close();
			throw ex;
		}
	}

	private static SnapshotSource copied(Path dir, String backend, Opener opener) throws IOException {
		Path work = Files.createTempDirectory("quorumkv-snapshot-" + backend + "-");
		try {
			return new Copied(opener.open(work.resolve("db")), work);
		}
		catch (IOException | RuntimeException ex) {
			SnapshotFiles.deleteTree(work);
			throw ex;
		}
	}

	private static final class Lsm extends SnapshotSource {

		private final LsmSnapshotReader reader;

		private final @Nullable LsmSnapshotReader incremental;

		Lsm(LsmSnapshotReader reader, @Nullable LsmSnapshotReader incremental) {
			this.reader = reader;
			this.incremental = incremental;
		}

		@Override
		List<Iterator<Entry>> tables() {
			if (this.incremental == null) {
				return this.reader.tables();
			}
			List<Iterator<Entry>> all = new java.util.ArrayList<>(this.reader.tables());
			all.addAll(this.incremental.tables());
			return all;
		}

		@Override
		public void close() {
			try {
				this.reader.close();
			}
			finally {
				if (this.incremental != null) {
					this.incremental.close();
				}
			}
		}

	}

	private static final class Copied extends SnapshotSource {

		private final Storage storage;

		private final Path work;

		Copied(Storage storage, Path work) {
			this.storage = storage;
			this.work = work;
		}

		@Override
		List<Iterator<Entry>> tables() {
			return List.of(this.storage.scan(new byte[0], null).toIterable().iterator());
		}

		@Override
		public void close() {
			try {
				this.storage.close();
			}
			finally {
				SnapshotFiles.deleteTree(this.work);
			}
		}

	}

}
