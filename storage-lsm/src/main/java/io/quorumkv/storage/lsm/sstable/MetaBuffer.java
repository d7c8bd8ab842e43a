package io.quorumkv.storage.lsm.sstable;

import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * What a table builder gathers for the whole table (its keys' hashes, its block index),
 * held in chunks of {@value #CHUNK} bytes instead of one array that doubles: a table of
 * 64 MiB has half a million keys, and one array of their hashes (4 MB) or of its index
 * (about half a MB) would each be a humongous allocation for G1 (half a region or more,
 * regions of 1 MB under a 1 GB heap), which starts a concurrent cycle of its own; at 100
 * million keys, compactions finishing tables every few seconds kept G1 in back-to-back
 * cycles with young pauses up to 0.8 s. A chunk of 64 KB never is.
 */
final class MetaBuffer {

	/** Bytes per chunk: far under half of G1's smallest region (1 MB). */
	static final int CHUNK = 64 * 1024;

	private final List<byte[]> chunks = new ArrayList<>();

	private byte[] current = new byte[0];

	private int used;

	private long size;

	/** Appends {@code length} bytes of {@code bytes} from {@code offset}. */
	void write(byte[] bytes, int offset, int length) {
		while (length > 0) {
			makeRoom();
			int step = Math.min(length, this.current.length - this.used);
			System.arraycopy(bytes, offset, this.current, this.used, step);
			this.used += step;
			offset += step;
			length -= step;
			this.size += step;
		}
	}

	/** Appends a big-endian int. */
	void writeInt(int value) {
		for (int shift = 24; shift >= 0; shift -= 8) {
			makeRoom();
			this.current[this.used++] = (byte) (value >>> shift);
			this.size++;
		}
	}

	/** Starts a new chunk when the current one is full. */
	private void makeRoom() {
		if (this.used == this.current.length) {
			this.current = new byte[CHUNK];
			this.chunks.add(this.current);
			this.used = 0;
		}
	}

	/** Bytes written. */
	long size() {
		return this.size;
	}

	/** Feeds the bytes, in order, to {@code crc}. */
	void checksum(CRC32C crc) {
		long left = this.size;
		for (byte[] chunk : this.chunks) {
			int length = (int) Math.min(left, chunk.length);
			crc.update(chunk, 0, length);
			left -= length;
		}
	}

	/** Writes the bytes, in order, to {@code out}. */
	void writeTo(OutputStream out) throws IOException {
		long left = this.size;
		for (byte[] chunk : this.chunks) {
			int length = (int) Math.min(left, chunk.length);
			out.write(chunk, 0, length);
			left -= length;
		}
	}

}
