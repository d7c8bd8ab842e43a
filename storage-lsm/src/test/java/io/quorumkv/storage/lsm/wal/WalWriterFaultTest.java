package io.quorumkv.storage.lsm.wal;

import static io.quorumkv.storage.contract.Entries.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.io.Fault;
import io.quorumkv.storage.lsm.io.FaultFileIo;
import io.quorumkv.storage.lsm.io.FaultFileIo.Op;
import io.quorumkv.storage.lsm.io.FileIo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A WAL segment under failing writes and fsyncs (the fault-injecting file layer). */
class WalWriterFaultTest {

	@TempDir
	Path dir;

	/**
	 * A full disk can land part of a record and fail. Were a later append to land after
	 * it (another writer of the same segment), the torn record would sit in the middle of
	 * the log: damage, and the store would not open again. So the segment refuses every
	 * append after a failed write, and replay drops the torn record as the last one.
	 */
	@Test
	void afterAWriteFailedPartwayNoAppendLandsSoTheTornRecordStaysLast() throws IOException {
		Entry a = Entry.value(bytes("a"), new byte[40], 1);
		Entry b = Entry.value(bytes("b"), new byte[40], 2);
		Entry c = Entry.value(bytes("c"), new byte[40], 3);
		int torn = 0;
		for (int seed = 0; seed < 20; seed++) {
			Path folder = this.dir.resolve("seed-" + seed);
			FaultFileIo io = new FaultFileIo(folder, seed).inject(Fault.at(Op.WRITE, "wal-.*", 2).failPartially());
			Path file = folder.resolve("wal-000001.log");
			try (WalWriter writer = WalWriter.create(io, file, 1)) {
				writer.append(a);
				assertThatThrownBy(() -> writer.append(b)).isInstanceOf(IOException.class)
					.hasMessageContaining("injected write failure");
				long landed = Files.size(file) - WalRecord.encodedSize(a);
				torn += (landed > 0 && landed < WalRecord.encodedSize(b)) ? 1 : 0;
				assertThatThrownBy(() -> writer.append(c)).as("seed %d", seed)
					.isInstanceOf(IOException.class)
					.hasMessageContaining("failed earlier");
				assertThatThrownBy(() -> writer.appendAll(List.of(c, c))).isInstanceOf(IOException.class);
			}
			List<Entry> replayed = new ArrayList<>();
			WalReader.replay(FileIo.real(), file, replayed::add);
			assertThat(replayed).as("seed %d", seed).isIn(List.of(a), List.of(a, b));
		}
		assertThat(torn).as("seeds that tore the record inside").isGreaterThan(10);
	}

	/**
	 * fsyncgate: after a failed fsync the kernel may have dropped the unsynced pages and
	 * reports the next fsync a success. So the segment's every later sync fails with the
	 * first failure, appends are refused, and the segment is cut back to what was synced:
	 * a crash image (power loss or process crash) replays exactly the synced records,
	 * with no hole of dropped bytes in the middle of the log.
	 */
	@Test
	void afterAFailedFsyncEverySyncFailsNothingIsAppendedAndTheSegmentEndsAtItsLastSync() throws IOException {
		Entry a = Entry.value(bytes("a"), new byte[40], 1);
		Entry b = Entry.value(bytes("b"), new byte[40], 2);
		Entry c = Entry.value(bytes("c"), new byte[40], 3);
		for (FaultFileIo.Tear tear : new FaultFileIo.Tear[] { FaultFileIo.Tear.DROP_UNSYNCED,
				FaultFileIo.Tear.KEEP_WRITTEN }) {
			Path folder = this.dir.resolve("sticky-" + tear);
			FaultFileIo io = new FaultFileIo(folder, 1).inject(Fault.at(Op.SYNC, "wal-.*", 2).fail());
			Path file = folder.resolve("wal-000001.log");
			try (WalWriter writer = WalWriter.create(io, file, 1)) {
				writer.append(a);
				writer.sync();
				long end = writer.append(b);
				assertThatThrownBy(writer::sync).hasMessageContaining("injected SYNC failure");
				assertThatThrownBy(writer::sync).as("the next sync, which the disk would let succeed")
					.isInstanceOf(IOException.class)
					.hasMessageContaining("an earlier fsync of WAL segment")
					.hasRootCauseMessage(
							"injected SYNC failure on " + file.toAbsolutePath() + ": its unsynced bytes are lost");
				assertThat(writer.isSyncedTo(end)).isFalse();
				assertThatThrownBy(() -> writer.append(c)).isInstanceOf(IOException.class)
					.hasMessageContaining("failed earlier");
			}
			Path image = io.powerLoss(tear, this.dir.resolve("image-" + tear)).folder();
			List<Entry> replayed = new ArrayList<>();
			WalReader.replay(FileIo.real(), image.resolve(file.getFileName()), replayed::add);
			assertThat(replayed).as("%s", tear).containsExactly(a);
		}
	}

	@Test
	void aFailedFsyncIsReportedAndNotTakenForASync() throws IOException {
		Path folder = this.dir.resolve("sync");
		FaultFileIo io = new FaultFileIo(folder, 1).inject(Fault.at(Op.SYNC, "wal-.*", 1).fail());
		try (WalWriter writer = WalWriter.create(io, folder.resolve("wal-000001.log"), 1)) {
			long end = writer.append(Entry.value(bytes("a"), bytes("1"), 1));
			assertThatThrownBy(writer::sync).isInstanceOf(IOException.class).hasMessageContaining("injected SYNC");
			assertThat(writer.isSyncedTo(end)).isFalse();
		}
	}

}
