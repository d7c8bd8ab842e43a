package io.quorumkv.storage.lsm.wal;

import static io.quorumkv.storage.contract.Entries.allByteValues;
import static io.quorumkv.storage.contract.Entries.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.quorumkv.storage.CorruptedStorageException;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.io.FileIo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WalRecordTest {

	@TempDir
	Path dir;

	private final List<Entry> entries = List.of(Entry.value(bytes("k"), bytes("v"), 1), Entry.tombstone(bytes("t"), -5),
			Entry.expiring(allByteValues(), allByteValues(), Long.MAX_VALUE, Long.MIN_VALUE),
			Entry.expiring(bytes("empty"), new byte[0], 0, 1_000_000));

	private Path write(List<Entry> entries) throws IOException {
		Path file = this.dir.resolve("wal-000001.log");
		try (WalWriter writer = WalWriter.create(FileIo.real(), file, 1)) {
			for (Entry e : entries) {
				writer.append(e);
			}
			writer.sync();
		}
		return file;
	}

	@Test
	void recordsRoundTrip() throws IOException {
		Path file = write(this.entries);
		List<Entry> replayed = new ArrayList<>();
		WalReader.Replay replay = WalReader.replay(FileIo.real(), file, replayed::add);
		assertThat(replayed).containsExactlyElementsOf(this.entries);
		assertThat(replay.tornTail()).isFalse();
		assertThat(replay.validLength()).isEqualTo(Files.size(file));
	}

	@Test
	void aVersion1RecordIsReadAsItWasWritten() throws IOException {
		// A value and a tombstone as the format of version 1 wrote them (kinds 0 and 1),
		// byte for byte: version 2 writes entries without expiry the same way.
		byte[] value = { 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 1, 'k', 0, 0, 0, 2, 'v', 'w' };
		byte[] tombstone = { 1, -1, -1, -1, -1, -1, -1, -1, -5, 0, 0, 0, 1, 't' };
		assertThat(WalRecord.decodePayload(value, 0, value.length)).isEqualTo(Entry.value(bytes("k"), bytes("vw"), 7));
		assertThat(WalRecord.decodePayload(tombstone, 0, tombstone.length)).isEqualTo(Entry.tombstone(bytes("t"), -5));
		byte[] encoded = WalRecord.encode(Entry.value(bytes("k"), bytes("vw"), 7));
		assertThat(java.util.Arrays.copyOfRange(encoded, WalRecord.HEADER_SIZE, encoded.length)).isEqualTo(value);
	}

	@Test
	void anExpiringRecordWithoutRoomForItsExpiryOrWithNoExpiryIsMalformed() {
		byte[] encoded = WalRecord.encode(Entry.expiring(bytes("k"), bytes("v"), 7, 9));
		byte[] payload = java.util.Arrays.copyOfRange(encoded, WalRecord.HEADER_SIZE, encoded.length);
		assertThat(payload[0]).isEqualTo(WalRecord.KIND_EXPIRING);
		assertThat(WalRecord.decodePayload(payload, 0, payload.length))
			.isEqualTo(Entry.expiring(bytes("k"), bytes("v"), 7, 9));
		assertThat(WalRecord.decodePayload(payload, 0, 15)).isNull();
		byte[] never = payload.clone();
		java.nio.ByteBuffer.wrap(never).putLong(9, Long.MAX_VALUE);
		assertThat(WalRecord.decodePayload(never, 0, never.length)).isNull();
		byte[] unknown = payload.clone();
		unknown[0] = 3;
		assertThat(WalRecord.decodePayload(unknown, 0, unknown.length)).isNull();
	}

	@Test
	void truncatedTailAtEveryOffsetOfTheLastRecordIsDroppedAndCut() throws IOException {
		Path file = write(this.entries);
		byte[] full = Files.readAllBytes(file);
		int lastLength = WalRecord.encode(this.entries.getLast()).length;
		int lastStart = full.length - lastLength;
		for (int cut = lastStart + 1; cut < full.length; cut++) {
			Files.write(file, java.util.Arrays.copyOf(full, cut));
			List<Entry> replayed = new ArrayList<>();
			WalReader.Replay replay = WalReader.replay(FileIo.real(), file, replayed::add);
			assertThat(replayed).as("cut at %d", cut).containsExactlyElementsOf(this.entries.subList(0, 3));
			assertThat(replay.tornTail()).isTrue();
			assertThat(Files.size(file)).isEqualTo(lastStart);
		}
	}

	/**
	 * After a crash a file system may keep a file's new length but not all of its data:
	 * the torn record is then followed by zeros. Nothing valid follows it, so it is a
	 * torn tail, not damage.
	 */
	@Test
	void theLastRecordTornAtEveryOffsetAndFollowedByZerosIsDroppedAndCut() throws IOException {
		// A last record whose bytes do not end in zeros: zeros cannot complete it.
		List<Entry> written = List.of(this.entries.get(0), this.entries.get(2),
				Entry.value(bytes("last"), bytes("its value"), 77));
		Path file = write(written);
		byte[] full = Files.readAllBytes(file);
		int lastStart = full.length - WalRecord.encode(written.getLast()).length;
		for (int cut = lastStart; cut < full.length; cut++) {
			for (int zeros : new int[] { 1, 7, 100, 5000 }) {
				Files.write(file, java.util.Arrays.copyOf(java.util.Arrays.copyOf(full, cut), cut + zeros));
				List<Entry> replayed = new ArrayList<>();
				WalReader.Replay replay = WalReader.replay(FileIo.real(), file, replayed::add);
				assertThat(replayed).as("cut at %d, %d zeros", cut, zeros)
					.containsExactlyElementsOf(written.subList(0, 2));
				assertThat(replay.tornTail()).isTrue();
				assertThat(Files.size(file)).isEqualTo(lastStart);
			}
		}
	}

	@Test
	void zeroFilledTailIsTorn() throws IOException {
		Path file = write(this.entries);
		long size = Files.size(file);
		Files.write(file, new byte[100], java.nio.file.StandardOpenOption.APPEND);
		List<Entry> replayed = new ArrayList<>();
		assertThat(WalReader.replay(FileIo.real(), file, replayed::add).tornTail()).isTrue();
		assertThat(replayed).containsExactlyElementsOf(this.entries);
		assertThat(Files.size(file)).isEqualTo(size);
	}

	@Test
	void flippedByteBeforeValidRecordsIsCorruptionWithFileAndOffset() throws IOException {
		Path file = write(this.entries);
		byte[] bytes = Files.readAllBytes(file);
		int secondStart = WalRecord.encode(this.entries.get(0)).length;
		for (int offset : new int[] { 2, secondStart + 5, secondStart + WalRecord.HEADER_SIZE + 3 }) {
			byte[] damaged = bytes.clone();
			damaged[offset] ^= 0x10;
			Files.write(file, damaged);
			int recordStart = (offset < secondStart) ? 0 : secondStart;
			assertThatThrownBy(() -> WalReader.replay(FileIo.real(), file, (e) -> {
			})).isInstanceOfSatisfying(CorruptedStorageException.class, (ex) -> {
				assertThat(ex.file()).isEqualTo(file);
				assertThat(ex.offset()).isEqualTo(recordStart);
			});
			assertThat(Files.size(file)).as("corruption never truncates").isEqualTo(bytes.length);
		}
	}

}
