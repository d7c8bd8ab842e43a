package io.quorumkv.storage.lsm.manifest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.zip.CRC32C;

import io.quorumkv.storage.CorruptedStorageException;
import io.quorumkv.storage.lsm.io.Fault;
import io.quorumkv.storage.lsm.io.FaultFileIo;
import io.quorumkv.storage.lsm.io.FaultFileIo.Op;
import io.quorumkv.storage.lsm.io.FaultFileIo.Tear;
import io.quorumkv.storage.lsm.io.FileIo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The manifest (docs/formats/manifest.md): round trips; every truncation, every flipped
 * bit, a bad magic, version or table count is reported as damage naming the file, never
 * read as a smaller table set; and a power loss at any step of a write leaves the old or
 * the new snapshot, whole.
 */
class ManifestTest {

	private static final Manifest OLD = new Manifest(12, 9, List.of(new Manifest.TableRef(3, 0)), 1_000_000);

	private static final Manifest NEW = new Manifest(20, 17,
			List.of(new Manifest.TableRef(3, 1), new Manifest.TableRef(15, 0), new Manifest.TableRef(16, 0)),
			-7_000_000_000L);

	@TempDir
	Path dir;

	@Test
	void aWrittenManifestReadsBackAndAMissingOneIsANewStore() throws IOException {
		assertThat(Manifest.read(FileIo.real(), this.dir)).isNull();
		NEW.write(FileIo.real(), this.dir);
		assertThat(Manifest.read(FileIo.real(), this.dir)).isEqualTo(NEW);
		assertThat(this.dir.resolve(Manifest.FILE_NAME + ".tmp")).doesNotExist();
		OLD.write(FileIo.real(), this.dir);
		assertThat(Manifest.read(FileIo.real(), this.dir)).isEqualTo(OLD);
	}

	@Test
	void aVersion1ManifestReadsWithTheEarliestWatermark() throws IOException {
		ByteBuffer v1 = ByteBuffer.allocate(32 + 24)
			.putInt(Manifest.MAGIC)
			.putInt(Manifest.VERSION_1)
			.putLong(20)
			.putLong(17)
			.putInt(2)
			.putLong(3)
			.putInt(1)
			.putLong(15)
			.putInt(0);
		Files.write(this.dir.resolve(Manifest.FILE_NAME), withCrc(v1.array()));
		assertThat(Manifest.read(FileIo.real(), this.dir)).isEqualTo(new Manifest(20, 17,
				List.of(new Manifest.TableRef(3, 1), new Manifest.TableRef(15, 0)), Long.MIN_VALUE));
		byte[] written = writtenBytes(NEW);
		assertThat(ByteBuffer.wrap(written).getInt(4)).as("version written").isEqualTo(2);
		assertThat(ByteBuffer.wrap(written).getLong(24)).as("watermark after minLiveWal").isEqualTo(-7_000_000_000L);
	}

	private byte[] writtenBytes(Manifest manifest) throws IOException {
		Path other = Files.createDirectories(this.dir.resolve("written"));
		manifest.write(FileIo.real(), other);
		return Files.readAllBytes(other.resolve(Manifest.FILE_NAME));
	}

	@Test
	void everyTruncationAndEveryFlippedBitIsDamageNamingTheFile() throws IOException {
		NEW.write(FileIo.real(), this.dir);
		Path file = this.dir.resolve(Manifest.FILE_NAME);
		byte[] bytes = Files.readAllBytes(file);
		for (int length = 0; length < bytes.length; length++) {
			Files.write(file, Arrays.copyOf(bytes, length));
			assertDamaged(file, "cut at " + length);
		}
		for (int bit = 0; bit < bytes.length * 8; bit++) {
			byte[] flipped = bytes.clone();
			flipped[bit / 8] ^= (byte) (1 << (bit % 8));
			Files.write(file, flipped);
			assertDamaged(file, "bit " + bit);
		}
	}

	@Test
	void aBadMagicVersionOrTableCountUnderAValidChecksumIsDamage() throws IOException {
		Path file = this.dir.resolve(Manifest.FILE_NAME);
		Files.write(file, withCrc(header(0x12345678, Manifest.VERSION, 1).array()));
		assertDamaged(file, "magic");
		Files.write(file, withCrc(header(Manifest.MAGIC, Manifest.VERSION + 1, 0).array()));
		assertDamaged(file, "version");
		Files.write(file, withCrc(header(Manifest.MAGIC, Manifest.VERSION, 2).array()));
		assertDamaged(file, "a count of 2 with no table");
		Files.write(file, withCrc(header(Manifest.MAGIC, Manifest.VERSION_1, 2).array()));
		assertDamaged(file, "a count of 2 with no table, version 1");
		Files.write(file, withCrc(Arrays.copyOf(header(Manifest.MAGIC, Manifest.VERSION_1, 0).array(), 32)));
		assertThat(Manifest.read(FileIo.real(), this.dir)).as("an empty version-1 manifest")
			.isEqualTo(new Manifest(5, 4, List.of(), Long.MIN_VALUE));
	}

	/**
	 * A power loss at each operation of a manifest write (the temporary file's creation,
	 * write, fsync, the rename, the folder's fsync), whatever survives of the unsynced
	 * bytes and names: the image holds the old manifest or the new one.
	 */
	@ParameterizedTest
	@EnumSource(value = Tear.class, names = { "DROP_UNSYNCED", "TORN_PREFIX", "TORN_PREFIX_THEN_ZEROS" })
	void aPowerLossAtAnyStepOfAWriteLeavesTheOldOrTheNewManifest(Tear tear) throws IOException {
		Set<Manifest> seen = new HashSet<>();
		Op[] steps = { Op.CREATE, Op.WRITE, Op.SYNC, Op.RENAME, Op.SYNC_DIRECTORY };
		for (Op step : steps) {
			for (int seed = 0; seed < 8; seed++) {
				Path live = Files.createDirectories(this.dir.resolve(tear + "-" + step + "-" + seed));
				OLD.write(FileIo.real(), live);
				Path image = this.dir.resolve(live.getFileName() + "-image");
				FaultFileIo io = new FaultFileIo(live, seed).inject(Fault.at(step, ".*", 1).powerLoss(tear, image));
				assertThatThrownBy(() -> NEW.write(io, live)).hasMessageContaining("power lost");
				Manifest read = Manifest.read(FileIo.real(), image);
				assertThat(read).as("%s at %s, seed %d", tear, step, seed).isIn(OLD, NEW);
				seen.add(read);
			}
		}
		Path live = Files.createDirectories(this.dir.resolve(tear + "-done"));
		OLD.write(FileIo.real(), live);
		FaultFileIo io = new FaultFileIo(live, 1);
		NEW.write(io, live);
		assertThat(Manifest.read(FileIo.real(), io.powerLoss(tear, this.dir.resolve(tear + "-done-image")).folder()))
			.as("once written, the new one survives")
			.isEqualTo(NEW);
		assertThat(seen).as("the old one before the rename is durable, either after it").contains(OLD);
	}

	private static ByteBuffer header(int magic, int version, int count) {
		ByteBuffer out = ByteBuffer.allocate((version == Manifest.VERSION_1) ? 32 : 40)
			.putInt(magic)
			.putInt(version)
			.putLong(5)
			.putLong(4);
		if (version != Manifest.VERSION_1) {
			out.putLong(99);
		}
		return out.putInt(count);
	}

	private static byte[] withCrc(byte[] body) {
		CRC32C crc = new CRC32C();
		crc.update(body, 0, body.length - 4);
		ByteBuffer.wrap(body).putInt(body.length - 4, (int) crc.getValue());
		return body;
	}

	private void assertDamaged(Path file, String what) {
		assertThatThrownBy(() -> Manifest.read(FileIo.real(), this.dir)).as(what)
			.isInstanceOfSatisfying(CorruptedStorageException.class, (ex) -> assertThat(ex.file()).isEqualTo(file));
	}

}
