package io.quorumkv.storage.lsm.sstable;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.CRC32C;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.io.FileIo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A table's builder writes its whole-file CRC32C beside it ({@link TableDigest}); a
 * digest torn at any length, or with any one byte flipped, reads as none.
 */
class TableDigestTest {

	@TempDir
	Path dir;

	@Test
	void aTableWrittenByTheBuilderHasADigestOfItsWholeFile() throws IOException {
		Path path = this.dir.resolve("000007.sst");
		try (SsTableBuilder builder = SsTableBuilder.create(FileIo.real(), path, 7, 4096, 10, BlockCodec.LZ4)) {
			for (int i = 0; i < 20_000; i++) {
				byte[] key = String.format("key-%08d", i).getBytes(StandardCharsets.US_ASCII);
				builder.add((i % 7 == 0) ? Entry.tombstone(key, i) : Entry.value(key, new byte[i % 300], i));
			}
			builder.finishAndOpen().release();
		}
		CRC32C crc = new CRC32C();
		crc.update(Files.readAllBytes(path));
		assertThat(TableDigest.of(path)).hasFileName("000007.sst.crc32c").hasSize(TableDigest.ENCODED_SIZE);
		assertThat(TableDigest.readBeside(path)).isEqualTo(new TableDigest(Files.size(path), crc.getValue()));
		try (var files = Files.list(this.dir)) {
			assertThat(files.map((f) -> f.getFileName().toString())).containsExactlyInAnyOrder("000007.sst",
					"000007.sst.crc32c");
		}
	}

	@Test
	void aTornOrDamagedDigestReadsAsNone() throws IOException {
		Path table = this.dir.resolve("000001.sst");
		TableDigest digest = new TableDigest(123_456_789_012L, 0xfedcba98L);
		byte[] bytes = digest.encode();
		assertThat(TableDigest.decode(bytes, bytes.length)).isEqualTo(digest);
		assertThat(TableDigest.readBeside(table)).isNull();
		for (int length = 0; length < bytes.length; length++) {
			Files.write(TableDigest.of(table), Arrays.copyOf(bytes, length));
			assertThat(TableDigest.readBeside(table)).as("torn at %d", length).isNull();
		}
		Files.write(TableDigest.of(table), Arrays.copyOf(bytes, bytes.length + 1));
		assertThat(TableDigest.readBeside(table)).as("one byte too long").isNull();
		for (int i = 0; i < bytes.length; i++) {
			byte[] damaged = bytes.clone();
			damaged[i] ^= 0x10;
			Files.write(TableDigest.of(table), damaged);
			assertThat(TableDigest.readBeside(table)).as("byte %d flipped", i).isNull();
		}
		Files.write(TableDigest.of(table), bytes);
		assertThat(TableDigest.readBeside(table)).isEqualTo(digest);
	}

}
