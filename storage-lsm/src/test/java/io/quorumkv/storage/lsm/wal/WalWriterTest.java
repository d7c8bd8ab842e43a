package io.quorumkv.storage.lsm.wal;

import static io.quorumkv.storage.contract.Entries.allByteValues;
import static io.quorumkv.storage.contract.Entries.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.io.FileIo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WalWriterTest {

	@TempDir
	Path dir;

	@Test
	void entriesAreWrittenAsTheirRecordsWhateverTheirSize() throws IOException {
		Path file = this.dir.resolve("wal-000001.log");
		Entry small = Entry.value(bytes("k"), bytes("v"), 1);
		Entry tombstone = Entry.tombstone(allByteValues(), -5);
		Entry large = Entry.value(bytes("large"), new byte[WalWriter.KEPT_BUFFER_LIMIT + 1], 7);
		try (WalWriter writer = WalWriter.create(FileIo.real(), file, 1)) {
			long end = writer.append(small);
			assertThat(end).isEqualTo(WalRecord.encodedSize(small));
			end = writer.append(tombstone);
			end = writer.append(large);
			assertThat(end).isEqualTo(writer.writtenPosition())
				.isEqualTo(
						WalRecord.encodedSize(small) + WalRecord.encodedSize(tombstone) + WalRecord.encodedSize(large));
			writer.append(small);
		}
		byte[] expected = concat(WalRecord.encode(small), WalRecord.encode(tombstone), WalRecord.encode(large),
				WalRecord.encode(small));
		assertThat(Files.readAllBytes(file)).isEqualTo(expected);
	}

	@Test
	void concurrentAppendsAllLandWholeAtThePositionsTheyWereGiven() throws Exception {
		Path file = this.dir.resolve("wal-000002.log");
		int threads = 4;
		int perThread = 3_000;
		List<Entry> replayed = new ArrayList<>();
		Set<Long> ends = new HashSet<>();
		try (WalWriter writer = WalWriter.create(FileIo.real(), file, 2)) {
			ExecutorService pool = Executors.newFixedThreadPool(threads);
			try {
				List<Future<List<Long>>> futures = new ArrayList<>();
				for (int t = 0; t < threads; t++) {
					int thread = t;
					futures.add(pool.submit(() -> {
						List<Long> mine = new ArrayList<>();
						for (int i = 0; i < perThread; i++) {
							// sizes vary so that batches cross the buffer's growth steps
							Entry entry = Entry.value(bytes("t" + thread + "-" + i), new byte[(i * 37) % 5000],
									(long) thread * perThread + i);
							mine.add(writer.append(entry));
						}
						return mine;
					}));
				}
				for (Future<List<Long>> future : futures) {
					ends.addAll(future.get(60, TimeUnit.SECONDS));
				}
			}
			finally {
				pool.shutdownNow();
			}
			assertThat(ends).hasSize(threads * perThread).contains(writer.writtenPosition());
		}
		WalReader.Replay replay = WalReader.replay(FileIo.real(), file, replayed::add);
		assertThat(replay.tornTail()).isFalse();
		assertThat(replay.records()).isEqualTo(threads * perThread);
		long position = 0;
		Set<Long> replayedEnds = new HashSet<>();
		for (Entry entry : replayed) {
			position += WalRecord.encodedSize(entry);
			replayedEnds.add(position);
			String key = new String(entry.key());
			int i = Integer.parseInt(key.substring(key.indexOf('-') + 1));
			assertThat(entry.value()).hasSize((i * 37) % 5000);
		}
		assertThat(replayedEnds).isEqualTo(ends);
	}

	@Test
	void appendAllWritesTheRecordsInTheirOrderAndReturnsThePositionAfterTheLast() throws IOException {
		Path file = this.dir.resolve("wal-000003.log");
		Entry first = Entry.value(bytes("a"), bytes("1"), 1);
		Entry second = Entry.tombstone(bytes("b"), 2);
		Entry third = Entry.value(bytes("c"), new byte[300], 3);
		try (WalWriter writer = WalWriter.create(FileIo.real(), file, 3)) {
			assertThat(writer.appendAll(List.of())).isZero();
			long end = writer.appendAll(List.of(first, second, third));
			assertThat(end).isEqualTo(writer.writtenPosition())
				.isEqualTo(WalRecord.encodedSize(first) + WalRecord.encodedSize(second) + WalRecord.encodedSize(third));
			assertThat(writer.append(first)).isEqualTo(end + WalRecord.encodedSize(first));
		}
		assertThat(Files.readAllBytes(file)).isEqualTo(concat(WalRecord.encode(first), WalRecord.encode(second),
				WalRecord.encode(third), WalRecord.encode(first)));
	}

	@Test
	void concurrentAppendAllsKeepEachListsOrderAndLoseNothing() throws Exception {
		Path file = this.dir.resolve("wal-000004.log");
		int threads = 4;
		int lists = 500;
		int perList = 7;
		try (WalWriter writer = WalWriter.create(FileIo.real(), file, 4)) {
			ExecutorService pool = Executors.newFixedThreadPool(threads);
			try {
				List<Future<?>> futures = new ArrayList<>();
				for (int t = 0; t < threads; t++) {
					int thread = t;
					futures.add(pool.submit(() -> {
						for (int l = 0; l < lists; l++) {
							List<Entry> list = new ArrayList<>();
							for (int i = 0; i < perList; i++) {
								list.add(Entry.value(bytes(thread + "-" + l + "-" + i), new byte[(l * 31 + i) % 700],
										l));
							}
							long end = writer.appendAll(list);
							assertThat(end).isLessThanOrEqualTo(writer.writtenPosition());
						}
						return null;
					}));
				}
				for (Future<?> future : futures) {
					future.get(60, TimeUnit.SECONDS);
				}
			}
			finally {
				pool.shutdownNow();
			}
		}
		List<Entry> replayed = new ArrayList<>();
		WalReader.Replay replay = WalReader.replay(FileIo.real(), file, replayed::add);
		assertThat(replay.tornTail()).isFalse();
		assertThat(replayed).hasSize(threads * lists * perList);
		// Per thread, the records come in the order appended: list by list, entry by
		// entry.
		int[] next = new int[threads];
		for (Entry entry : replayed) {
			String[] parts = new String(entry.key()).split("-");
			int thread = Integer.parseInt(parts[0]);
			int position = Integer.parseInt(parts[1]) * perList + Integer.parseInt(parts[2]);
			assertThat(position).as("thread %d", thread).isEqualTo(next[thread]);
			next[thread]++;
		}
	}

	@Test
	void appendAllToAClosedSegmentFails() throws IOException {
		WalWriter writer = WalWriter.create(FileIo.real(), this.dir.resolve("wal-000005.log"), 5);
		writer.close();
		assertThatThrownBy(() -> writer.appendAll(List.of(Entry.value(bytes("k"), bytes("v"), 1))))
			.isInstanceOf(IOException.class)
			.hasMessageContaining("closed");
	}

	private static byte[] concat(byte[]... parts) {
		int length = 0;
		for (byte[] part : parts) {
			length += part.length;
		}
		byte[] out = new byte[length];
		int offset = 0;
		for (byte[] part : parts) {
			System.arraycopy(part, 0, out, offset, part.length);
			offset += part.length;
		}
		return out;
	}

}
