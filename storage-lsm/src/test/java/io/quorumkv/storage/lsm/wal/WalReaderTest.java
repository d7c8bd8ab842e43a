package io.quorumkv.storage.lsm.wal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.quorumkv.storage.CorruptedStorageException;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.io.AppendFile;
import io.quorumkv.storage.lsm.io.FileIo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A WAL's last record that fails its checksum is taken for a torn write only when the
 * file reads the same twice: a read that flipped a bit of a whole, synced record (a
 * transient fault of the disk or the bus) must not cut an acknowledged write off the log.
 */
class WalReaderTest {

	@TempDir
	Path dir;

	@Test
	void aLastRecordThatReadsBadOnceIsReadAgainNotTruncated() throws IOException {
		Path file = writeRecords(3);
		byte[] good = Files.readAllBytes(file);
		List<Entry> replayed = new ArrayList<>();
		WalReader.Replay replay = WalReader.replay(flippingReads(1, good.length - 1), file, replayed::add);
		assertThat(replay.tornTail()).isFalse();
		assertThat(replayed).hasSize(3);
		assertThat(Files.readAllBytes(file)).isEqualTo(good);
	}

	@Test
	void aLastRecordThatReadsBadEveryTimeIsATornTail() throws IOException {
		Path file = writeRecords(3);
		byte[] bytes = Files.readAllBytes(file);
		bytes[bytes.length - 1] ^= 1;
		Files.write(file, bytes);
		List<Entry> replayed = new ArrayList<>();
		WalReader.Replay replay = WalReader.replay(FileIo.real(), file, replayed::add);
		assertThat(replay.tornTail()).isTrue();
		assertThat(replayed).hasSize(2);
		assertThat(Files.size(file)).isEqualTo(replay.validLength());
	}

	@Test
	void aLastRecordThatReadsDifferentlyEveryTimeIsDamageNotATornTail() throws IOException {
		Path file = writeRecords(3);
		long size = Files.size(file);
		assertThatThrownBy(() -> WalReader.replay(flippingReads(Integer.MAX_VALUE, -1), file, (entry) -> {
		})).isInstanceOf(CorruptedStorageException.class);
		assertThat(Files.size(file)).isEqualTo(size);
	}

	private Path writeRecords(int count) throws IOException {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		for (int i = 0; i < count; i++) {
			out.write(WalRecord.encode(Entry.value(("key-" + i).getBytes(), ("value-" + i).getBytes(), 1000 + i)));
		}
		Path file = this.dir.resolve("wal-000001.log");
		Files.write(file, out.toByteArray());
		return file;
	}

	/**
	 * The real files, but the first {@code times} reads of a whole file flip a bit of its
	 * byte at {@code offset} (-1: a different byte of the last record each time).
	 */
	private static FileIo flippingReads(int times, int offset) {
		FileIo real = FileIo.real();
		AtomicInteger reads = new AtomicInteger();
		return new FileIo() {

			@Override
			public AppendFile createNew(Path path) throws IOException {
				return real.createNew(path);
			}

			@Override
			public AppendFile createOrTruncate(Path path) throws IOException {
				return real.createOrTruncate(path);
			}

			@Override
			public byte[] readAll(Path path) throws IOException {
				byte[] bytes = real.readAll(path);
				int read = reads.getAndIncrement();
				if (read < times) {
					int at = (offset >= 0) ? offset : bytes.length - 1 - (read % 4);
					bytes[at] ^= (byte) (1 << (read % 8));
				}
				return bytes;
			}

			@Override
			public MemorySegment map(Path path, Arena arena) throws IOException {
				return real.map(path, arena);
			}

			@Override
			public void truncate(Path path, long length) throws IOException {
				real.truncate(path, length);
			}

			@Override
			public void rename(Path from, Path to) throws IOException {
				real.rename(from, to);
			}

			@Override
			public boolean deleteIfExists(Path path) throws IOException {
				return real.deleteIfExists(path);
			}

			@Override
			public void syncDirectory(Path dir) throws IOException {
				real.syncDirectory(dir);
			}

			@Override
			public List<Path> list(Path dir) throws IOException {
				return real.list(dir);
			}

			@Override
			public boolean exists(Path path) {
				return real.exists(path);
			}

		};
	}

}
