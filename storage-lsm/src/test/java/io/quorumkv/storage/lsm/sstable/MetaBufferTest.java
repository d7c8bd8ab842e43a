package io.quorumkv.storage.lsm.sstable;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Random;
import java.util.zip.CRC32C;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class MetaBufferTest {

	@Test
	void writesAcrossChunkBoundariesComeBackInOrderWithTheirChecksum() throws IOException {
		Random random = new Random(42);
		MetaBuffer buffer = new MetaBuffer();
		ByteArrayOutputStream expected = new ByteArrayOutputStream();
		// Pieces of every size up to two chunks, so that writes start and end anywhere in
		// a chunk and some span more than one.
		for (int i = 0; i < 200; i++) {
			byte[] piece = new byte[random.nextInt(2 * MetaBuffer.CHUNK + 1)];
			random.nextBytes(piece);
			int offset = (piece.length > 0) ? random.nextInt(piece.length) : 0;
			buffer.write(piece, offset, piece.length - offset);
			expected.write(piece, offset, piece.length - offset);
			buffer.writeInt(i);
			expected.write(new byte[] { 0, 0, (byte) (i >>> 8), (byte) i }, 0, 4);
		}
		ByteArrayOutputStream written = new ByteArrayOutputStream();
		buffer.writeTo(written);
		assertThat(buffer.size()).isEqualTo(expected.size());
		assertThat(written.toByteArray()).isEqualTo(expected.toByteArray());
		CRC32C crc = new CRC32C();
		buffer.checksum(crc);
		CRC32C reference = new CRC32C();
		reference.update(expected.toByteArray());
		assertThat(crc.getValue()).isEqualTo(reference.getValue());
	}

	@Test
	void anEmptyBufferWritesNothing() throws IOException {
		MetaBuffer buffer = new MetaBuffer();
		ByteArrayOutputStream written = new ByteArrayOutputStream();
		buffer.writeTo(written);
		assertThat(buffer.size()).isZero();
		assertThat(written.size()).isZero();
	}

}
