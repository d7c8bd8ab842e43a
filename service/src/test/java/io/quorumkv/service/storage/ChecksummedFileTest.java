package io.quorumkv.service.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import io.quorumkv.storage.CorruptedStorageException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChecksummedFileTest {

	@TempDir
	Path dir;

	@Test
	void writtenPayloadReadsBackAndAMissingFileReadsAsNull() throws IOException {
		ChecksummedFile file = new ChecksummedFile(this.dir.resolve("f"), 0x51_4b_56_58, 1);
		assertThat(file.read()).isNull();
		file.write("first".getBytes(StandardCharsets.UTF_8));
		file.write("second".getBytes(StandardCharsets.UTF_8));
		assertThat(file.read()).asString(StandardCharsets.UTF_8).isEqualTo("second");
		assertThat(this.dir.resolve("f.tmp")).doesNotExist();
	}

	@Test
	void everyFlippedByteAndEveryTruncationIsReportedAsDamage() throws IOException {
		Path path = this.dir.resolve("f");
		ChecksummedFile file = new ChecksummedFile(path, 0x51_4b_56_58, 1);
		file.write(new byte[] { 1, 2, 3, 4, 5, 6, 7, 8 });
		byte[] good = Files.readAllBytes(path);
		for (int i = 0; i < good.length; i++) {
			byte[] bad = good.clone();
			bad[i] ^= 0x10;
			Files.write(path, bad);
			assertThatThrownBy(file::read).as("byte %d flipped", i).isInstanceOf(CorruptedStorageException.class);
		}
		for (int length = 0; length < good.length; length++) {
			Files.write(path, java.util.Arrays.copyOf(good, length));
			assertThatThrownBy(file::read).as("cut at %d", length).isInstanceOf(CorruptedStorageException.class);
		}
	}

	@Test
	void anotherStructuresFileIsNotReadAsThisOne() throws IOException {
		Path path = this.dir.resolve("f");
		new ChecksummedFile(path, 1, 1).write(new byte[8]);
		assertThatThrownBy(() -> new ChecksummedFile(path, 2, 1).read()).isInstanceOf(CorruptedStorageException.class)
			.hasMessageContaining("magic");
		assertThatThrownBy(() -> new ChecksummedFile(path, 1, 2).read()).isInstanceOf(CorruptedStorageException.class)
			.hasMessageContaining("version");
	}

}
