package io.quorumkv.service.backup;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.LsmOptions;
import io.quorumkv.storage.lsm.LsmStorage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A snapshot sums each file it lists; a file it summed before, unchanged since (same
 * inode, name, size and modification time: an LSM table, or a hard link to it), is not
 * read again. A table with its digest ({@code 000042.sst.crc32c}, written with it) is not
 * read at all; one without, or whose digest is damaged or of another length, is.
 */
class FileSumsTest {

	@TempDir
	Path folder;

	@Test
	void aFileSummedBeforeIsNotReadAgainAndAChangedOneIs() throws IOException {
		Path table = write("data/000001.sst", "first content");
		Path other = write("data/000002.sst", "other content");
		FileSums sums = new FileSums();
		List<SnapshotManifest.FileEntry> first = sums.entries(this.folder,
				List.of("data/000001.sst", "data/000002.sst"));
		assertThat(first).extracting(SnapshotManifest.FileEntry::crc32c)
			.containsExactly(SnapshotManifest.crc32c(table), SnapshotManifest.crc32c(other));
		long tableSum = first.get(0).crc32c();

		// Rewritten in place behind the same identity (inode, size and time kept): the
		// sum
		// kept is given, which shows the file was not read again.
		FileTime time = Files.getLastModifiedTime(table);
		Files.writeString(table, "FIRST CONTENT", StandardCharsets.UTF_8, StandardOpenOption.TRUNCATE_EXISTING);
		Files.setLastModifiedTime(table, time);
		assertThat(sums.entries(this.folder, List.of("data/000001.sst")).get(0).crc32c()).isEqualTo(tableSum)
			.isNotEqualTo(SnapshotManifest.crc32c(table));

		// A changed time is another file: summed again.
		Files.setLastModifiedTime(table, FileTime.fromMillis(time.toMillis() + 5_000));
		assertThat(sums.entries(this.folder, List.of("data/000001.sst")).get(0).crc32c())
			.isEqualTo(SnapshotManifest.crc32c(table));
	}

	@Test
	void aHardLinkIsTheFileItLinks() throws IOException {
		Path table = write("data/000003.sst", "linked content");
		FileSums sums = new FileSums();
		long sum = sums.entries(this.folder, List.of("data/000003.sst")).get(0).crc32c();
		Path link = Files.createDirectories(this.folder.resolve("snap/data")).resolve("000003.sst");
		Files.createLink(link, table);
		FileTime time = Files.getLastModifiedTime(table);
		Files.writeString(table, "LINKED CONTENT", StandardCharsets.UTF_8, StandardOpenOption.TRUNCATE_EXISTING);
		Files.setLastModifiedTime(table, time);
		assertThat(sums.entries(this.folder.resolve("snap"), List.of("data/000003.sst")).get(0).crc32c())
			.isEqualTo(sum);
	}

	@Test
	void aSnapshotWhoseTablesAllHaveDigestsReadsNoTable() throws IOException {
		List<String> paths = lsmSnapshot(3);
		List<Path> read = new ArrayList<>();
		List<SnapshotManifest.FileEntry> entries = new FileSums((file) -> {
			read.add(file);
			return SnapshotManifest.crc32c(file);
		}).entries(this.folder, paths);
		assertThat(paths).filteredOn((path) -> path.endsWith(".sst")).hasSize(3);
		assertThat(read).isNotEmpty().noneMatch((file) -> file.toString().endsWith(".sst"));
		assertRight(entries);
	}

	@Test
	void aTableWithoutItsDigestOrWithADamagedOneOrOfAnotherLengthIsRead() throws IOException {
		List<String> paths = lsmSnapshot(3);
		List<String> tables = paths.stream().filter((path) -> path.endsWith(".sst")).toList();
		// A table written before digests: none.
		Files.delete(this.folder.resolve(tables.get(0) + ".crc32c"));
		// A damaged digest: one byte flipped.
		Path digest = this.folder.resolve(tables.get(1) + ".crc32c");
		byte[] bytes = Files.readAllBytes(digest);
		bytes[12] ^= 0x01;
		Files.write(digest, bytes, StandardOpenOption.TRUNCATE_EXISTING);
		// An intact digest of another length: the table is not the file it describes.
		Files.write(this.folder.resolve(tables.get(2)), new byte[] { 7 }, StandardOpenOption.APPEND);
		List<Path> read = new ArrayList<>();
		List<SnapshotManifest.FileEntry> entries = new FileSums((file) -> {
			read.add(file);
			return SnapshotManifest.crc32c(file);
		}).entries(this.folder, paths.stream().filter((path) -> !path.equals(tables.get(0) + ".crc32c")).toList());
		assertThat(read).filteredOn((file) -> file.toString().endsWith(".sst"))
			.containsExactlyInAnyOrderElementsOf(tables.stream().map(this.folder::resolve).toList());
		assertRight(entries);
	}

	@Test
	void aFileThatIsNotATableIsReadEvenWithADigestBesideIt() throws IOException {
		List<String> paths = lsmSnapshot(1);
		String manifest = paths.stream().filter((path) -> path.endsWith("/MANIFEST")).findFirst().orElseThrow();
		String table = paths.stream().filter((path) -> path.endsWith(".sst")).findFirst().orElseThrow();
		// An intact digest of the manifest's length, but of other bytes: only a table's
		// digest is ever written, so it is none of ours and must not be believed.
		Path manifestFile = this.folder.resolve(manifest);
		Files.copy(this.folder.resolve(table + ".crc32c"), this.folder.resolve(manifest + ".crc32c"));
		Files.write(manifestFile, new byte[(int) Files.size(this.folder.resolve(table))],
				StandardOpenOption.TRUNCATE_EXISTING);
		List<Path> read = new ArrayList<>();
		List<SnapshotManifest.FileEntry> entries = new FileSums((file) -> {
			read.add(file);
			return SnapshotManifest.crc32c(file);
		}).entries(this.folder, List.of(manifest));
		assertThat(read).containsExactly(manifestFile);
		assertRight(entries);
	}

	/**
	 * The paths (under {@link #folder}) of an LSM snapshot in {@code snap/data} of
	 * {@code tables} tables.
	 */
	private List<String> lsmSnapshot(int tables) {
		long base = System.currentTimeMillis() * 1_000;
		Path snapshot = this.folder.resolve("snap/data");
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(this.folder.resolve("live")))) {
			for (int t = 0; t < tables; t++) {
				for (int i = 0; i < 300; i++) {
					byte[] key = String.format("key%02d%06d", t, i).getBytes(StandardCharsets.US_ASCII);
					storage.upsert(Entry.value(key, ("v" + i).getBytes(StandardCharsets.UTF_8), base + i))
						.block(Duration.ofSeconds(30));
				}
				if (t < tables - 1) {
					// A snapshot flushes the memtable: one table for each batch.
					storage.snapshot(Files.createDirectories(this.folder.resolve("flush" + t)))
						.block(Duration.ofSeconds(30));
				}
			}
			Files.createDirectories(snapshot);
			return storage.snapshot(snapshot)
				.block(Duration.ofSeconds(30))
				.stream()
				.map((name) -> "snap/data/" + name)
				.toList();
		}
		catch (IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
	}

	/** Each entry's size and sum are its file's (read here, not through FileSums). */
	private void assertRight(List<SnapshotManifest.FileEntry> entries) throws IOException {
		for (SnapshotManifest.FileEntry entry : entries) {
			Path file = this.folder.resolve(entry.path());
			assertThat(entry.size()).as(entry.path()).isEqualTo(Files.size(file));
			assertThat(entry.crc32c()).as(entry.path()).isEqualTo(SnapshotManifest.crc32c(file));
		}
	}

	private Path write(String path, String content) throws IOException {
		Path file = this.folder.resolve(path);
		Files.createDirectories(file.getParent());
		return Files.writeString(file, content, StandardCharsets.UTF_8);
	}

}
