package io.quorumkv.storage.lsm.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

import io.quorumkv.storage.lsm.io.FaultFileIo.Op;
import io.quorumkv.storage.lsm.io.FaultFileIo.Tear;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fault layer keeps exactly what a disk would after a power loss: synced data, names
 * made durable by a folder sync (or a prefix of the later name changes), and per
 * {@link Tear} a torn part of the rest. The crash tests trust it; these tests check it.
 */
class FaultFileIoTest {

	@TempDir
	Path root;

	private static byte[] bytes(int from, int count) {
		byte[] out = new byte[count];
		for (int i = 0; i < count; i++) {
			out[i] = (byte) (from + i + 1);
		}
		return out;
	}

	private static void write(AppendFile file, byte[] bytes) throws IOException {
		file.write(bytes, 0, bytes.length);
	}

	@Test
	void aPowerLossKeepsSyncedBytesAndDropsTheRest() throws IOException {
		Path dir = this.root.resolve("data");
		FaultFileIo io = new FaultFileIo(dir, 1);
		try (AppendFile file = io.createNew(dir.resolve("wal-000001.log"))) {
			write(file, bytes(0, 10));
			file.sync();
			io.syncDirectory(dir);
			write(file, bytes(10, 5));
		}
		FaultFileIo.Image image = io.powerLoss(Tear.DROP_UNSYNCED, this.root.resolve("image"));
		assertThat(Files.readAllBytes(image.folder().resolve("wal-000001.log"))).isEqualTo(bytes(0, 10));
		assertThat(image.unsyncedBytesDropped()).isEqualTo(5);
		assertThatThrownBy(() -> io.readAll(dir.resolve("wal-000001.log"))).isInstanceOf(IOException.class)
			.hasMessageContaining("power lost");
	}

	@Test
	void aTornTailIsAPrefixOfWhatWasWrittenAndZerosMayFollowIt() throws IOException {
		Set<Integer> lengths = new HashSet<>();
		for (int seed = 0; seed < 40; seed++) {
			for (Tear tear : new Tear[] { Tear.TORN_PREFIX, Tear.TORN_PREFIX_THEN_ZEROS }) {
				Path dir = this.root.resolve("data-" + tear + seed);
				FaultFileIo io = new FaultFileIo(dir, seed);
				try (AppendFile file = io.createNew(dir.resolve("f"))) {
					write(file, bytes(0, 8));
					file.sync();
					io.syncDirectory(dir);
					write(file, bytes(8, 24));
				}
				Path image = io.powerLoss(tear, this.root.resolve("image-" + tear + seed)).folder();
				byte[] kept = Files.readAllBytes(image.resolve("f"));
				lengths.add(kept.length);
				assertThat(kept.length).isBetween(8, 32);
				int written = 0;
				while (written < kept.length && kept[written] == (byte) (written + 1)) {
					written++;
				}
				assertThat(written).as("synced bytes kept").isGreaterThanOrEqualTo(8);
				byte[] rest = Arrays.copyOfRange(kept, written, kept.length);
				assertThat(rest).as("after the written prefix").isEqualTo(new byte[rest.length]);
				if (tear == Tear.TORN_PREFIX) {
					assertThat(rest).isEmpty();
				}
			}
		}
		assertThat(lengths).as("tears at many bytes").hasSizeGreaterThan(10);
	}

	@Test
	void aNameIsDurableOnlyOnceItsFolderIsSynced() throws IOException {
		Set<Boolean> present = new HashSet<>();
		for (int seed = 0; seed < 20; seed++) {
			Path dir = this.root.resolve("data" + seed);
			FaultFileIo io = new FaultFileIo(dir, seed);
			try (AppendFile file = io.createNew(dir.resolve("000001.sst"))) {
				write(file, bytes(0, 4));
				file.sync();
			}
			Path image = io.powerLoss(Tear.DROP_UNSYNCED, this.root.resolve("image" + seed)).folder();
			present.add(Files.exists(image.resolve("000001.sst")));
		}
		assertThat(present).as("a created name may or may not survive").containsExactlyInAnyOrder(true, false);
		Path dir = this.root.resolve("synced");
		FaultFileIo io = new FaultFileIo(dir, 1);
		try (AppendFile file = io.createNew(dir.resolve("000001.sst"))) {
			write(file, bytes(0, 4));
			file.sync();
		}
		io.syncDirectory(dir);
		Path image = io.powerLoss(Tear.DROP_UNSYNCED, this.root.resolve("image-synced")).folder();
		assertThat(Files.readAllBytes(image.resolve("000001.sst"))).isEqualTo(bytes(0, 4));
	}

	/**
	 * A tree's model: files at any depth; a folder renamed whole is one name change of
	 * its parent, and the changes still pending inside it move with it (the same folder).
	 */
	@Test
	void aTreeRenamesAFolderWholeAsOneChangeOfItsParent() throws IOException {
		Set<String> seen = new HashSet<>();
		for (int seed = 0; seed < 30; seed++) {
			Path dir = this.root.resolve("tree" + seed);
			FaultFileIo io = FaultFileIo.tree(dir, seed);
			Path partial = dir.resolve("snapshots/.s1.partial");
			io.createDirectories(partial.resolve("data"));
			try (AppendFile file = io.createNew(partial.resolve("data/000001.sst"))) {
				write(file, bytes(0, 4));
				file.sync();
			}
			io.syncDirectory(partial.resolve("data"));
			try (AppendFile file = io.createNew(partial.resolve("snapshot.json"))) {
				write(file, bytes(0, 2));
				file.sync();
			}
			io.rename(partial, dir.resolve("snapshots/s1"));
			assertThat(dir.resolve("snapshots/s1/data/000001.sst")).exists();
			boolean synced = seed % 2 == 0;
			if (synced) {
				// The rename is durable; snapshot.json's name in the folder is not.
				io.syncDirectory(dir.resolve("snapshots"));
			}
			Path image = io.powerLoss(Tear.DROP_UNSYNCED, this.root.resolve("tree-image" + seed)).folder();
			boolean renamed = Files.exists(image.resolve("snapshots/s1/data/000001.sst"));
			boolean old = Files.exists(image.resolve("snapshots/.s1.partial/data/000001.sst"));
			assertThat(renamed).as("the table under exactly one name").isNotEqualTo(old);
			if (synced) {
				assertThat(renamed).isTrue();
				assertThat(image.resolve("snapshots/.s1.partial")).doesNotExist();
			}
			String json = (renamed ? "s1" : ".s1.partial") + "/snapshot.json";
			seen.add((renamed ? "new" : "old") + (Files.exists(image.resolve("snapshots/" + json)) ? "+json" : ""));
		}
		assertThat(seen).contains("new", "old", "new+json");
	}

	@Test
	void aRenameOverAFileLeavesTheOldOrTheNewOneWholeUntilTheFolderIsSynced() throws IOException {
		Set<String> seen = new HashSet<>();
		for (int seed = 0; seed < 30; seed++) {
			Path dir = this.root.resolve("data" + seed);
			Files.createDirectories(dir);
			Files.write(dir.resolve("MANIFEST"), bytes(0, 6));
			FaultFileIo io = new FaultFileIo(dir, seed);
			try (AppendFile file = io.createOrTruncate(dir.resolve("MANIFEST.tmp"))) {
				write(file, bytes(50, 9));
				file.sync();
			}
			io.rename(dir.resolve("MANIFEST.tmp"), dir.resolve("MANIFEST"));
			io.deleteIfExists(dir.resolve("gone"));
			Path image = io.powerLoss(Tear.TORN_PREFIX, this.root.resolve("image" + seed)).folder();
			byte[] manifest = Files.readAllBytes(image.resolve("MANIFEST"));
			assertThat(manifest).satisfiesAnyOf((m) -> assertThat(m).isEqualTo(bytes(0, 6)),
					(m) -> assertThat(m).isEqualTo(bytes(50, 9)));
			seen.add(Arrays.toString(manifest) + Files.exists(image.resolve("MANIFEST.tmp")));
		}
		assertThat(seen).as("old manifest (tmp there or not yet), new manifest").hasSize(3);
	}

	@Test
	void aDeletedFileComesBackUntilTheFolderIsSynced() throws IOException {
		Path dir = this.root.resolve("data");
		Files.createDirectories(dir);
		Files.write(dir.resolve("wal-000003.log"), bytes(0, 7));
		FaultFileIo io = new FaultFileIo(dir, 3);
		assertThat(io.deleteIfExists(dir.resolve("wal-000003.log"))).isTrue();
		assertThat(dir.resolve("wal-000003.log")).doesNotExist();
		FaultFileIo.Image image = io.powerLoss(Tear.DROP_UNSYNCED, this.root.resolve("image"));
		if (image.nameChangesLost() == 1) {
			assertThat(Files.readAllBytes(image.folder().resolve("wal-000003.log"))).isEqualTo(bytes(0, 7));
		}
		else {
			assertThat(image.folder().resolve("wal-000003.log")).doesNotExist();
		}
		Path synced = this.root.resolve("synced");
		Files.createDirectories(synced);
		Files.write(synced.resolve("wal-000003.log"), bytes(0, 7));
		FaultFileIo io2 = new FaultFileIo(synced, 3);
		io2.deleteIfExists(synced.resolve("wal-000003.log"));
		io2.syncDirectory(synced);
		assertThat(io2.powerLoss(Tear.DROP_UNSYNCED, this.root.resolve("image2")).folder().resolve("wal-000003.log"))
			.doesNotExist();
	}

	@Test
	void aProcessCrashKeepsEverythingWritten() throws IOException {
		Path dir = this.root.resolve("data");
		FaultFileIo io = new FaultFileIo(dir, 1);
		try (AppendFile file = io.createNew(dir.resolve("wal-000001.log"))) {
			write(file, bytes(0, 10));
		}
		Path image = io.powerLoss(Tear.KEEP_WRITTEN, this.root.resolve("image")).folder();
		assertThat(Files.readAllBytes(image.resolve("wal-000001.log"))).isEqualTo(bytes(0, 10));
	}

	/**
	 * A failed {@code fsync} loses the file's unsynced bytes as Linux does, and the next
	 * {@code fsync} succeeds without bringing them back: every image, also a process
	 * crash's, holds zeros in their place; the page cache (reads) still has them.
	 */
	@Test
	void aFailedFsyncDropsTheUnsyncedBytesAndTheNextOneSucceeds() throws IOException {
		for (Tear tear : new Tear[] { Tear.DROP_UNSYNCED, Tear.KEEP_WRITTEN }) {
			Path dir = this.root.resolve("data-" + tear);
			FaultFileIo io = new FaultFileIo(dir, 1).inject(Fault.at(Op.SYNC, "wal-.*", 2).fail());
			try (AppendFile file = io.createNew(dir.resolve("wal-000001.log"))) {
				io.syncDirectory(dir);
				write(file, bytes(0, 10));
				file.sync();
				write(file, bytes(10, 5));
				assertThatThrownBy(file::sync).hasMessageContaining("injected SYNC failure")
					.hasMessageContaining("unsynced bytes are lost");
				write(file, bytes(15, 3));
				file.sync();
			}
			byte[] expected = new byte[18];
			System.arraycopy(bytes(0, 10), 0, expected, 0, 10);
			System.arraycopy(bytes(15, 3), 0, expected, 15, 3);
			assertThat(io.readAll(dir.resolve("wal-000001.log"))).as("reads: the page cache")
				.isEqualTo(Arrays.copyOf(bytes(0, 18), 18));
			FaultFileIo.Image image = io.powerLoss(tear, this.root.resolve("image-" + tear));
			assertThat(Files.readAllBytes(image.folder().resolve("wal-000001.log"))).as("%s", tear).isEqualTo(expected);
			assertThat(image.unsyncedBytesDropped()).isEqualTo(5);
		}
	}

	/** A truncation cuts the dropped ranges with the file. */
	@Test
	void aTruncationBelowTheDroppedBytesLeavesACleanFile() throws IOException {
		Path dir = this.root.resolve("data");
		FaultFileIo io = new FaultFileIo(dir, 1).inject(Fault.at(Op.SYNC, "wal-.*", 2).fail());
		Path wal = dir.resolve("wal-000001.log");
		try (AppendFile file = io.createNew(wal)) {
			io.syncDirectory(dir);
			write(file, bytes(0, 10));
			file.sync();
			write(file, bytes(10, 5));
			assertThatThrownBy(file::sync).hasMessageContaining("injected SYNC failure");
			io.truncate(wal, 10);
		}
		FaultFileIo.Image image = io.powerLoss(Tear.KEEP_WRITTEN, this.root.resolve("image"));
		assertThat(Files.readAllBytes(image.folder().resolve("wal-000001.log"))).isEqualTo(bytes(0, 10));
	}

	@Test
	void faultsFireAtTheNthMatchOnwardOrByChance() throws IOException {
		Path dir = this.root.resolve("data");
		FaultFileIo io = new FaultFileIo(dir, 7).inject(Fault.at(Op.SYNC, "wal-.*", 2).fail())
			.inject(Fault.from(Op.RENAME, "MANIFEST", 2).fail());
		try (AppendFile wal = io.createNew(dir.resolve("wal-000001.log"));
				AppendFile other = io.createNew(dir.resolve("other"))) {
			wal.sync();
			other.sync();
			other.sync();
			assertThatThrownBy(wal::sync).hasMessageContaining("injected SYNC failure");
			wal.sync();
		}
		io.createNew(dir.resolve("a")).close();
		io.rename(dir.resolve("a"), dir.resolve("MANIFEST"));
		for (int i = 0; i < 3; i++) {
			io.createOrTruncate(dir.resolve("b")).close();
			assertThatThrownBy(() -> io.rename(dir.resolve("b"), dir.resolve("MANIFEST")))
				.hasMessageContaining("injected RENAME failure");
		}
		assertThat(io.injected()).isEqualTo(4);

		FaultFileIo random = new FaultFileIo(this.root.resolve("random"), 11)
			.inject(Fault.randomly(Op.CREATE, ".*", 0.5).fail());
		int failed = 0;
		for (int i = 0; i < 200; i++) {
			try {
				random.createNew(this.root.resolve("random").resolve("f" + i)).close();
			}
			catch (IOException ex) {
				failed++;
			}
		}
		assertThat(failed).isBetween(60, 140);
	}

	@Test
	void aPartialWriteLandsAPrefixAndAPowerLossAtAWriteKeepsItUnsynced() throws IOException {
		Path dir = this.root.resolve("data");
		FaultFileIo io = new FaultFileIo(dir, 5).inject(Fault.at(Op.WRITE, "wal-.*", 2).failPartially())
			.inject(Fault.at(Op.WRITE, "wal-.*", 3).powerLoss(Tear.DROP_UNSYNCED, this.root.resolve("image")));
		Path wal = dir.resolve("wal-000001.log");
		try (AppendFile file = io.createNew(wal)) {
			write(file, bytes(0, 4));
			file.sync();
			io.syncDirectory(dir);
			assertThatThrownBy(() -> write(file, bytes(4, 100))).hasMessageContaining("injected write failure");
			long partial = Files.size(wal);
			assertThat(partial).isBetween(4L, 104L);
			assertThat(Files.readAllBytes(wal)).isEqualTo(Arrays.copyOf(bytes(0, 104), (int) partial));
			assertThatThrownBy(() -> write(file, bytes(0, 3))).hasMessageContaining("power lost");
		}
		assertThat(io.isDead()).isTrue();
		assertThat(Files.readAllBytes(this.root.resolve("image").resolve("wal-000001.log"))).isEqualTo(bytes(0, 4));
		assertThatThrownBy(() -> io.createNew(dir.resolve("x"))).hasMessageContaining("power lost");
	}

	@Test
	void flippedReadsChangeOneBitOfTheCopyNeverTheFile() throws IOException {
		Path dir = this.root.resolve("data");
		Files.createDirectories(dir);
		byte[] content = bytes(0, 64);
		Files.write(dir.resolve("000001.sst"), content);
		FaultFileIo io = new FaultFileIo(dir, 9).flipReads(1.0);
		byte[] read = io.readAll(dir.resolve("000001.sst"));
		assertThat(differingBits(read, content)).isEqualTo(1);
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment mapped = io.map(dir.resolve("000001.sst"), arena);
			assertThat(differingBits(mapped.toArray(ValueLayout.JAVA_BYTE), content)).isEqualTo(1);
		}
		assertThat(io.flips()).hasSize(2).allMatch((f) -> f.file().equals(dir.resolve("000001.sst")));
		assertThat(Files.readAllBytes(dir.resolve("000001.sst"))).isEqualTo(content);
	}

	private static int differingBits(byte[] a, byte[] b) {
		int bits = 0;
		for (int i = 0; i < a.length; i++) {
			bits += Integer.bitCount((a[i] ^ b[i]) & 0xFF);
		}
		return bits;
	}

}
