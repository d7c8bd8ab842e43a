package io.quorumkv.service.backup;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.Stream;

import io.quorumkv.storage.CorruptedStorageException;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import org.jspecify.annotations.Nullable;

/**
 * Checks a node's snapshot folder without writing anything: its manifest is there (else
 * the snapshot never finished), every file it lists has its size and CRC32C, no other
 * file is in {@code data/}, and every table opens and reads to its end (every block's
 * checksum verified; an H2 or Derby backup is opened on a copy and scanned), and so are
 * the incremental tables beside an LSM snapshot ({@link Incrementals}) and its WAL
 * segments, every record's checksums ({@link WalLinks}). Reports the keys, the tombstones
 * among their newest versions, the time range of the versions, and how far a restore of
 * it reaches.
 */
public final class SnapshotVerifier {

	private SnapshotVerifier() {
	}

	/**
	 * What a snapshot holds.
	 *
	 * @param manifest its manifest
	 * @param keys distinct keys
	 * @param versions versions stored (a key may have one in several tables)
	 * @param tombstones keys whose newest version is a tombstone
	 * @param expiring keys whose newest version is a value with an expiry
	 * @param minTimestamp the oldest version's timestamp (0 when empty)
	 * @param maxTimestamp the newest version's timestamp (0 when empty)
	 * @param incrementalTables the incremental tables chained to the snapshot (read with
	 * it, counted above)
	 * @param reach the latest time a restore of this node may ask for: the snapshot's, or
	 * the newest chained incremental table's freeze
	 * @param gap why the chain of incremental tables stops before the newest one, or null
	 * @param walSegments the WAL segments chained to the snapshot (every record's
	 * checksums verified; their versions are not counted above)
	 * @param walRecords the records they hold
	 * @param walGap why the chain of WAL segments stops before the newest one, or null
	 */
	public record Report(SnapshotManifest manifest, long keys, long versions, long tombstones, long expiring,
			long minTimestamp, long maxTimestamp, int incrementalTables, long reach, @Nullable String gap,
			int walSegments, long walRecords, @Nullable String walGap) {
	}

	/**
	 * Verifies the snapshot folder {@code dir}.
	 * @throws SnapshotException naming the file at fault
	 */
	public static Report verify(Path dir) {
		SnapshotManifest manifest = checkFiles(dir);
		Incrementals incrementals = Incrementals.check(dir, manifest);
		long keys = 0;
		long versions = 0;
		long tombstones = 0;
		long expiring = 0;
		long min = Long.MAX_VALUE;
		long max = Long.MIN_VALUE;
		try (SnapshotSource reader = SnapshotSource.open(dir, manifest, incrementals.tables())) {
			VersionMerge merge = new VersionMerge(reader.tables());
			while (merge.hasNext()) {
				Entry newest = null;
				for (Entry version : merge.next()) {
					versions++;
					min = Math.min(min, version.timestamp());
					max = Math.max(max, version.timestamp());
					newest = EntryOrder.max(newest, version);
				}
				keys++;
				if (newest != null && newest.isTombstone()) {
					tombstones++;
				}
				else if (newest != null && newest.expires()) {
					expiring++;
				}
			}
		}
		catch (CorruptedStorageException ex) {
			throw new SnapshotException("snapshot " + dir + " is damaged: " + ex.getMessage(), ex);
		}
		return new Report(manifest, keys, versions, tombstones, expiring, (versions > 0) ? min : 0,
				(versions > 0) ? max : 0, incrementals.tables().size(), incrementals.reach(), incrementals.gap(),
				incrementals.wal().segments().size(), incrementals.wal().records(), incrementals.wal().gap());
	}

	/**
	 * Checks the manifest and every file's size and checksum.
	 * @return the manifest
	 */
	static SnapshotManifest checkFiles(Path dir) {
		SnapshotManifest manifest = SnapshotManifest.read(dir);
		Set<String> listed = new HashSet<>();
		for (SnapshotManifest.FileEntry file : manifest.files()) {
			Path path = dir.resolve(file.path()).normalize();
			if (!path.startsWith(dir.normalize())) {
				throw new SnapshotException(
						dir.resolve(SnapshotManifest.FILE_NAME) + " lists a file outside: " + file.path());
			}
			listed.add(file.path());
			try {
				long size = Files.size(path);
				if (size != file.size()) {
					throw new SnapshotException(
							"file " + path + " has " + size + " bytes; the manifest says " + file.size());
				}
				long crc = SnapshotManifest.crc32c(path);
				if (crc != file.crc32c()) {
					throw new SnapshotException(
							"file " + path + " is damaged: its CRC32C is " + String.format("%08x", crc)
									+ ", the manifest says " + String.format("%08x", file.crc32c()));
				}
			}
			catch (java.nio.file.NoSuchFileException ex) {
				throw new SnapshotException("file " + path + " is missing");
			}
			catch (IOException ex) {
				throw new SnapshotException("file " + path + " cannot be read: " + ex.getMessage(), ex);
			}
		}
		Path data = dir.resolve(SnapshotManifest.DATA);
		if (Files.isDirectory(data)) {
			try (Stream<Path> files = Files.walk(data)) {
				for (Path file : files.filter(Files::isRegularFile).toList()) {
					String path = dir.relativize(file).toString().replace(java.io.File.separatorChar, '/');
					if (!listed.contains(path)) {
						throw new SnapshotException("file " + file + " is not in the manifest");
					}
				}
			}
			catch (IOException ex) {
				throw new SnapshotException("cannot list " + data + ": " + ex.getMessage(), ex);
			}
		}
		return manifest;
	}

}
