package io.quorumkv.storage.lsm.sstable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

import io.quorumkv.storage.CorruptedStorageException;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.io.FileIo;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Tables with compressed data blocks: they read back, and a damaged compressed block is
 * reported with file and offset, never decoded into other data.
 */
class CompressedTableTest {

	@TempDir
	Path dir;

	private static List<Entry> entries() {
		List<Entry> entries = new ArrayList<>();
		for (int i = 0; i < 400; i++) {
			byte[] key = String.format("user:%06d", i).getBytes(StandardCharsets.UTF_8);
			String json = "{\"id\":" + i + ",\"name\":\"user number " + i + "\",\"email\":\"user" + i
					+ "@example.com\",\"roles\":[\"reader\",\"writer\"],\"active\":" + (i % 3 != 0) + "}";
			entries.add((i % 5 == 0) ? Entry.expiring(key, json.getBytes(StandardCharsets.UTF_8), i, 1_000_000L + i)
					: Entry.value(key, json.getBytes(StandardCharsets.UTF_8), i));
		}
		return entries;
	}

	private Path write(BlockCodec codec) throws IOException {
		Path path = this.dir.resolve(codec + ".sst");
		try (SsTableBuilder builder = SsTableBuilder.create(FileIo.real(), path, 1, 4096, 10, codec)) {
			for (Entry e : entries()) {
				builder.add(e);
			}
			builder.finish();
		}
		return path;
	}

	@ParameterizedTest
	@EnumSource(BlockCodec.class)
	void everyEntryReadsBackAndTheBlocksAreStoredWithTheTablesCodec(BlockCodec codec) throws IOException {
		Path path = write(codec);
		SsTable table = SsTable.open(FileIo.real(), path, 1);
		try {
			for (Entry e : entries()) {
				assertThat(table.find(e.key())).isEqualTo(e);
			}
			TableProperties properties = table.properties();
			assertThat(properties.compression()).isEqualTo(codec.id());
			byte[] file = Files.readAllBytes(path);
			for (int i = 0; i < table.blockCount(); i++) {
				BlockHandle handle = table.blockHandle(i);
				assertThat(file[(int) (handle.offset() + handle.size())]).as("codec byte of block %d", i)
					.isEqualTo((byte) codec.id());
			}
			if (codec == BlockCodec.NONE) {
				assertThat(properties.storedDataBytes()).isEqualTo(properties.rawDataBytes());
			}
			else {
				assertThat(properties.storedDataBytes()).as("JSON documents compress")
					.isLessThan(properties.rawDataBytes() / 2);
			}
		}
		finally {
			table.release();
		}
	}

	/**
	 * Every byte of the second compressed block and of its trailer flipped in turn: each
	 * read of the block fails naming the file and the block's offset.
	 */
	@ParameterizedTest
	@EnumSource(value = BlockCodec.class, names = { "LZ4", "ZSTD" })
	void aFlippedByteAnywhereInACompressedBlockIsReportedWithFileAndOffset(BlockCodec codec) throws IOException {
		Path path = write(codec);
		byte[] original = Files.readAllBytes(path);
		BlockHandle second;
		SsTable intact = SsTable.open(FileIo.real(), path, 1);
		try {
			second = intact.blockHandle(1);
		}
		finally {
			intact.release();
		}
		byte[] probe = entries().get(0).key();
		Path damaged = this.dir.resolve("damaged.sst");
		int end = (int) second.end(TableFormat.CURRENT);
		for (int offset = (int) second.offset(); offset < end; offset++) {
			byte[] bytes = original.clone();
			bytes[offset] ^= (byte) (1 << (offset % 8));
			Files.write(damaged, bytes);
			SsTable table = SsTable.open(FileIo.real(), damaged, 2);
			try {
				byte[] key = keyInBlock(table, 1);
				assertThatThrownBy(() -> table.find(key)).as("byte %d flipped", offset)
					.isInstanceOfSatisfying(CorruptedStorageException.class, (ex) -> {
						assertThat(ex.file()).isEqualTo(damaged);
						assertThat(ex.offset()).isEqualTo(second.offset());
						assertThat(ex.getMessage()).contains("data block").contains("checksum");
					});
				// The other blocks are intact.
				assertThat(table.find(probe)).isEqualTo(entries().get(0));
			}
			finally {
				table.release();
			}
		}
	}

	/**
	 * A block whose checksum matches but whose declared raw length is not what it decodes
	 * to (a writer's bug, not disk damage) is corruption too, not data.
	 */
	@ParameterizedTest
	@EnumSource(value = BlockCodec.class, names = { "LZ4", "ZSTD" })
	void aCompressedBlockThatDoesNotDecodeToItsLengthIsCorruptionEvenUnderAGoodChecksum(BlockCodec codec)
			throws IOException {
		Path path = write(codec);
		SsTable intact = SsTable.open(FileIo.real(), path, 1);
		BlockHandle first = intact.blockHandle(0);
		intact.release();
		byte[] bytes = Files.readAllBytes(path);
		ByteBuffer buffer = ByteBuffer.wrap(bytes);
		int offset = (int) first.offset();
		buffer.putInt(offset, buffer.getInt(offset) + 1);
		CRC32C crc = new CRC32C();
		crc.update(bytes, offset, first.size() + 1);
		buffer.putInt(offset + first.size() + 1, (int) crc.getValue());
		Files.write(path, bytes);
		SsTable table = SsTable.open(FileIo.real(), path, 1);
		try {
			assertThatThrownBy(() -> table.find(entries().get(0).key()))
				.isInstanceOfSatisfying(CorruptedStorageException.class, (ex) -> {
					assertThat(ex.file()).isEqualTo(path);
					assertThat(ex.offset()).isEqualTo(first.offset());
				});
		}
		finally {
			table.release();
		}
	}

	private static byte[] keyInBlock(SsTable table, int block) {
		for (Entry e : entries()) {
			if (table.blockIndexFor(e.key()) == block) {
				return e.key();
			}
		}
		throw new AssertionError("no key in block " + block);
	}

}
