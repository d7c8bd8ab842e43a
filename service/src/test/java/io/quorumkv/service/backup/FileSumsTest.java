package io.quorumkv.service.backup;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A snapshot sums each file it lists; a file it summed before, unchanged since (same
 * inode, name, size and modification time: an LSM table, or a hard link to it), is not
 * read again.
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

	private Path write(String path, String content) throws IOException {
		Path file = this.folder.resolve(path);
		Files.createDirectories(file.getParent());
		return Files.writeString(file, content, StandardCharsets.UTF_8);
	}

}
