package io.quorumkv.storage.lsm.manifest;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

import io.quorumkv.storage.CorruptedStorageException;
import io.quorumkv.storage.lsm.io.AppendFile;
import io.quorumkv.storage.lsm.io.FileIo;
import org.jspecify.annotations.Nullable;

/**
 * The list of live tables and the oldest WAL segment still needed, as one snapshot file
 * (see {@code docs/formats/manifest.md}).
 *
 * <pre>
 * manifest = u32 magic "QKVM" | u32 version | u64 nextFileNumber | u64 minLiveWal
 *            | (version 2) i64 expiryWatermark
 *            | u32 tableCount | (u64 fileNumber | u32 level) * tableCount | u32 crc32c
 * </pre>
 *
 * Written to {@code MANIFEST.tmp}, forced, renamed atomically over {@code MANIFEST} and
 * the folder forced: a crash leaves either the old or the new snapshot, never a mix.
 * Invariants: every listed table file exists (tables are published before the manifest
 * names them, and deleted only after a manifest stopped naming them); every WAL segment
 * numbered {@code >= minLiveWal} holds writes not yet in a listed table; file numbers
 * below {@code nextFileNumber} are never reused; the engine never judges expiry by an
 * instant before {@code expiryWatermark}. Version 1 (no watermark) is read as a watermark
 * of {@link Long#MIN_VALUE}; version 2 is written.
 *
 * @param nextFileNumber the next unused file number (tables and WAL segments share the
 * sequence)
 * @param minLiveWal WAL segments numbered below this are flushed and may be deleted
 * @param tables the live tables
 * @param expiryWatermark the latest instant (microseconds) the engine had judged expiry
 * by when it wrote this manifest: after a restart it judges by no earlier one, so that a
 * wall clock set back does not bring expired entries back
 */
public record Manifest(long nextFileNumber, long minLiveWal, List<TableRef> tables, long expiryWatermark) {

	public static final String FILE_NAME = "MANIFEST";

	static final int MAGIC = 0x514b564d;

	static final int VERSION_1 = 1;

	static final int VERSION = 2;

	public Manifest {
		tables = List.copyOf(tables);
	}

	/** One live table: its file number and level. */
	public record TableRef(long number, int level) {
	}

	/** The manifest of {@code dir}, or {@code null} for a new store. */
	public static @Nullable Manifest read(FileIo io, Path dir) throws IOException {
		Path file = dir.resolve(FILE_NAME);
		if (!io.exists(file)) {
			return null;
		}
		byte[] bytes = io.readAll(file);
		if (bytes.length < 32) {
			throw new CorruptedStorageException(file, 0, "manifest", "too short: " + bytes.length + " bytes");
		}
		CRC32C crc = new CRC32C();
		crc.update(bytes, 0, bytes.length - 4);
		ByteBuffer in = ByteBuffer.wrap(bytes);
		if ((int) crc.getValue() != in.getInt(bytes.length - 4)) {
			throw new CorruptedStorageException(file, bytes.length - 4, "manifest", "checksum mismatch");
		}
		int magic = in.getInt();
		int version = in.getInt();
		if (magic != MAGIC || (version != VERSION && version != VERSION_1)) {
			throw new CorruptedStorageException(file, 0, "manifest", "bad magic or unsupported version");
		}
		int fixed = (version == VERSION_1) ? 32 : 40;
		if (bytes.length < fixed) {
			throw new CorruptedStorageException(file, 0, "manifest", "too short: " + bytes.length + " bytes");
		}
		long next = in.getLong();
		long minLiveWal = in.getLong();
		long watermark = (version == VERSION_1) ? Long.MIN_VALUE : in.getLong();
		int count = in.getInt();
		if (count < 0 || (long) count * 12 != bytes.length - fixed) {
			throw new CorruptedStorageException(file, fixed - 8, "manifest", "bad table count " + count);
		}
		List<TableRef> tables = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			tables.add(new TableRef(in.getLong(), in.getInt()));
		}
		return new Manifest(next, minLiveWal, tables, watermark);
	}

	/** Replaces the manifest of {@code dir} atomically and durably. */
	public void write(FileIo io, Path dir) throws IOException {
		ByteBuffer out = ByteBuffer.allocate(40 + 12 * this.tables.size());
		out.putInt(MAGIC).putInt(VERSION).putLong(this.nextFileNumber).putLong(this.minLiveWal);
		out.putLong(this.expiryWatermark);
		out.putInt(this.tables.size());
		for (TableRef table : this.tables) {
			out.putLong(table.number()).putInt(table.level());
		}
		CRC32C crc = new CRC32C();
		crc.update(out.array(), 0, out.position());
		out.putInt((int) crc.getValue());
		Path temp = dir.resolve(FILE_NAME + ".tmp");
		try (AppendFile file = io.createOrTruncate(temp)) {
			file.write(out.array(), 0, out.position());
			file.sync();
		}
		io.rename(temp, dir.resolve(FILE_NAME));
		io.syncDirectory(dir);
	}

}
