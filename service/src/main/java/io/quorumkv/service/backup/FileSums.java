package io.quorumkv.service.backup;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.lsm.sstable.TableDigest;
import org.jspecify.annotations.Nullable;

/**
 * The CRC32C of the files a snapshot lists, kept from one snapshot to the next by the
 * file's identity (its inode, name, size and modification time). An LSM table never
 * changes once written and a snapshot's hard link is the same file, so a table summed for
 * one snapshot is not read again for the next: only the tables written since are. Holds
 * the files of the last snapshot taken. A table whose digest is beside it
 * ({@link TableDigest}, written with the table, linked with it into the snapshot) is not
 * read at all, unless the digest is damaged or not of the table's size (a table written
 * before digests has none).
 */
final class FileSums {

	private final Map<Identity, Long> sums = new ConcurrentHashMap<>();

	private final Summer summer;

	/** Reads a file to sum it. */
	@FunctionalInterface
	interface Summer {

		long crc32c(Path file) throws IOException;

	}

	FileSums() {
		this(SnapshotManifest::crc32c);
	}

	/** Sums with {@code summer} the files it reads (a test counts them). */
	FileSums(Summer summer) {
		this.summer = summer;
	}

	/** A file's identity; none where the file system gives no file key. */
	record Identity(Object fileKey, String name, long size, long modifiedNanos) {

		static @Nullable Identity of(Path file) throws IOException {
			BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class);
			Object key = attributes.fileKey();
			return (key != null) ? new Identity(key, file.getFileName().toString(), attributes.size(),
					attributes.lastModifiedTime().to(TimeUnit.NANOSECONDS)) : null;
		}

	}

	/**
	 * The entries of {@code files} (paths under {@code folder}), summed or remembered.
	 */
	List<SnapshotManifest.FileEntry> entries(Path folder, List<String> files) throws IOException {
		Set<Identity> seen = new HashSet<>();
		List<SnapshotManifest.FileEntry> entries = new ArrayList<>();
		for (String path : files) {
			Path file = folder.resolve(path);
			Identity identity = Identity.of(file);
			if (identity == null) {
				long size = Files.size(file);
				entries.add(new SnapshotManifest.FileEntry(path, size, sum(file, size)));
				continue;
			}
			seen.add(identity);
			Long sum = this.sums.get(identity);
			if (sum == null) {
				sum = sum(file, identity.size());
				this.sums.put(identity, sum);
			}
			entries.add(new SnapshotManifest.FileEntry(path, identity.size(), sum));
		}
		this.sums.keySet().retainAll(seen);
		return entries;
	}

	/**
	 * The CRC32C of {@code file}, of {@code size} bytes: its table's digest (written with
	 * it) where it has one of that length, else read from the file.
	 */
	private long sum(Path file, long size) throws IOException {
		TableDigest digest = TableDigest.readBeside(file);
		return (digest != null && digest.length() == size) ? digest.crc32c() : this.summer.crc32c(file);
	}

}
