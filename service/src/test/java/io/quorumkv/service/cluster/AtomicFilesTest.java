package io.quorumkv.service.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AtomicFilesTest {

	@TempDir
	Path folder;

	@Test
	void writesAndReadsBackAndLeavesNoTemporaryFile() throws IOException {
		Path file = this.folder.resolve("f");
		assertThat(AtomicFiles.read(file, "qkv-test", 1)).isNull();
		AtomicFiles.write(file, "qkv-test", 1, "héllo\nworld");
		AtomicFiles.write(file, "qkv-test", 1, "second");
		assertThat(AtomicFiles.read(file, "qkv-test", 1)).isEqualTo("second");
		try (var files = Files.list(this.folder)) {
			assertThat(files).containsExactly(file);
		}
	}

	@Test
	void everyFlippedByteAndEveryTruncationIsReportedAsCorrupt() throws IOException {
		Path file = this.folder.resolve("f");
		AtomicFiles.write(file, "qkv-test", 1, "{\"epoch\":12}");
		byte[] good = Files.readAllBytes(file);
		for (int i = 0; i < good.length; i++) {
			byte[] bad = good.clone();
			bad[i] ^= 0x01;
			Files.write(file, bad);
			assertThatIllegalStateException().as("byte %d flipped", i)
				.isThrownBy(() -> AtomicFiles.read(file, "qkv-test", 1))
				.withMessageContaining("corrupt file");
		}
		for (int length = 0; length < good.length; length++) {
			Files.write(file, java.util.Arrays.copyOf(good, length));
			assertThatIllegalStateException().as("cut at %d", length)
				.isThrownBy(() -> AtomicFiles.read(file, "qkv-test", 1))
				.withMessageContaining(file.toAbsolutePath().toString());
		}
	}

	@Test
	void anotherVersionOrMagicIsRefused() {
		Path file = this.folder.resolve("f");
		AtomicFiles.write(file, "qkv-test", 2, "x");
		assertThatIllegalStateException().isThrownBy(() -> AtomicFiles.read(file, "qkv-test", 1))
			.withMessageContaining("format version 2");
		assertThatIllegalStateException().isThrownBy(() -> AtomicFiles.read(file, "qkv-other", 2))
			.withMessageContaining("not a qkv-other file");
	}

	@Test
	void theNodeIdIsCreatedOnceAndKept() {
		assertThat(NodeIdentity.loadOrCreate(this.folder, "http://127.0.0.1:8081")).isEqualTo("http://127.0.0.1:8081");
		assertThat(NodeIdentity.loadOrCreate(this.folder, "http://127.0.0.1:9999")).as("kept, not replaced")
			.isEqualTo("http://127.0.0.1:8081");
		assertThat(NodeIdentity.fresh()).startsWith("node-").isNotEqualTo(NodeIdentity.fresh());
	}

}
