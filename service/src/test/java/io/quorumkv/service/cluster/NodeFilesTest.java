package io.quorumkv.service.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.zip.CRC32C;

import io.quorumkv.service.storage.ChecksummedFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node's small text files (id, ring, transfers) in the one envelope of small node
 * files ({@link ChecksummedFile}), and in the text envelope the nodes before it wrote,
 * which they still read.
 */
class NodeFilesTest {

	private static final int MAGIC = 0x514b5658;

	@TempDir
	Path folder;

	@Test
	void writesAndReadsBackAndLeavesNoTemporaryFile() throws IOException {
		Path file = this.folder.resolve("f");
		ChecksummedFile envelope = ChecksummedFile.text(file, MAGIC, "qkv-test");
		assertThat(envelope.readText()).isNull();
		envelope.writeText("héllo\nworld");
		envelope.writeText("second");
		assertThat(envelope.readText()).isEqualTo("second");
		assertThat(ByteBuffer.wrap(Files.readAllBytes(file)).getInt()).as("the one envelope's magic").isEqualTo(MAGIC);
		try (var files = Files.list(this.folder)) {
			assertThat(files).containsExactly(file);
		}
	}

	@Test
	void everyFlippedByteAndEveryTruncationIsReportedAsCorrupt() throws IOException {
		Path file = this.folder.resolve("f");
		ChecksummedFile envelope = ChecksummedFile.text(file, MAGIC, "qkv-test");
		envelope.writeText("{\"epoch\":12}");
		corruptionsAreReported(file, envelope);
	}

	@Test
	void theTextEnvelopeOfTheNodesBeforeIsReadAndReplacedAtTheNextWrite() throws IOException {
		Path file = this.folder.resolve("f");
		Files.write(file, oldEnvelope("qkv-test", "{\"epoch\":7}"));
		ChecksummedFile envelope = ChecksummedFile.text(file, MAGIC, "qkv-test");
		assertThat(envelope.readText()).isEqualTo("{\"epoch\":7}");
		corruptionsAreReported(file, envelope);
		Files.write(file, oldEnvelope("qkv-test", "{\"epoch\":7}"));
		envelope.writeText("{\"epoch\":8}");
		assertThat(ByteBuffer.wrap(Files.readAllBytes(file)).getInt()).isEqualTo(MAGIC);
		assertThat(envelope.readText()).isEqualTo("{\"epoch\":8}");
		// Another structure's old file is not read as this one.
		Files.write(file, oldEnvelope("qkv-other", "x"));
		assertThatIllegalStateException().isThrownBy(envelope::readText).withMessageContaining("corrupt file");
	}

	@Test
	void theNodeIdIsCreatedOnceAndKeptInEitherEnvelope() throws IOException {
		assertThat(NodeIdentity.loadOrCreate(this.folder, "http://127.0.0.1:8081")).isEqualTo("http://127.0.0.1:8081");
		assertThat(NodeIdentity.loadOrCreate(this.folder, "http://127.0.0.1:9999")).as("kept, not replaced")
			.isEqualTo("http://127.0.0.1:8081");
		assertThat(NodeIdentity.fresh()).startsWith("node-").isNotEqualTo(NodeIdentity.fresh());
		// A node-id file of a node before the one envelope.
		Files.write(this.folder.resolve(NodeIdentity.FILE), oldEnvelope("qkv-node-id", "node-from-before"));
		assertThat(NodeIdentity.loadOrCreate(this.folder, "http://127.0.0.1:9999")).isEqualTo("node-from-before");
	}

	private static void corruptionsAreReported(Path file, ChecksummedFile envelope) throws IOException {
		byte[] good = Files.readAllBytes(file);
		for (int i = 0; i < good.length; i++) {
			byte[] bad = good.clone();
			bad[i] ^= 0x01;
			Files.write(file, bad);
			assertThatIllegalStateException().as("byte %d flipped", i)
				.isThrownBy(envelope::readText)
				.withMessageContaining("corrupt file");
		}
		for (int length = 0; length < good.length; length++) {
			Files.write(file, Arrays.copyOf(good, length));
			assertThatIllegalStateException().as("cut at %d", length)
				.isThrownBy(envelope::readText)
				.withMessageContaining(file.toAbsolutePath().toString());
		}
		Files.write(file, good);
	}

	/**
	 * A file as the nodes before the one envelope wrote it: a text header line, the body.
	 */
	static byte[] oldEnvelope(String magic, String body) {
		byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
		CRC32C crc = new CRC32C();
		crc.update(bytes);
		byte[] header = (magic + " 1 " + HexFormat.of().toHexDigits((int) crc.getValue()) + " " + bytes.length + "\n")
			.getBytes(StandardCharsets.US_ASCII);
		byte[] file = Arrays.copyOf(header, header.length + bytes.length);
		System.arraycopy(bytes, 0, file, header.length, bytes.length);
		return file;
	}

}
