package io.quorumkv.storage.lsm.sstable;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.quorumkv.storage.Entry;

/**
 * Builds one data block in the {@link TableFormat#CURRENT current} format (layout in
 * {@link Block}): entries in strictly ascending key order, each key prefix-compressed
 * against the previous one, with a full key (a restart point) every
 * {@link #RESTART_INTERVAL} entries so that a reader can binary-search.
 */
final class BlockBuilder {

	static final int RESTART_INTERVAL = 16;

	private final ByteArrayOutputStream out = new ByteArrayOutputStream(4096 + 512);

	private final List<Integer> restarts = new ArrayList<>();

	private byte[] lastKey = new byte[0];

	private int count;

	void add(Entry entry) {
		byte[] key = entry.key();
		int shared = 0;
		if (this.count % RESTART_INTERVAL == 0) {
			this.restarts.add(this.out.size());
		}
		else {
			shared = Arrays.mismatch(this.lastKey, key);
			shared = (shared < 0) ? key.length : Math.min(shared, key.length);
		}
		byte[] value = entry.value();
		Varints.write(this.out, shared);
		Varints.write(this.out, key.length - shared);
		Varints.write(this.out, (value == null) ? 0 : entry.expires() ? 1 : value.length + 2);
		writeLong(entry.timestamp());
		if (entry.expires()) {
			writeLong(entry.expiresAt());
			Varints.write(this.out, value.length);
		}
		this.out.write(key, shared, key.length - shared);
		if (value != null) {
			this.out.write(value, 0, value.length);
		}
		this.lastKey = key;
		this.count++;
	}

	private void writeLong(long v) {
		for (int i = 56; i >= 0; i -= 8) {
			this.out.write((int) (v >>> i));
		}
	}

	boolean isEmpty() {
		return this.count == 0;
	}

	byte[] lastKey() {
		return this.lastKey;
	}

	/** Bytes the block will have when finished. */
	int estimatedSize() {
		return this.out.size() + 4 * this.restarts.size() + 4;
	}

	/** The block contents (without the checksum trailer); the builder is reset. */
	byte[] finish() {
		ByteBuffer trailer = ByteBuffer.allocate(4 * this.restarts.size() + 4);
		for (int restart : this.restarts) {
			trailer.putInt(restart);
		}
		trailer.putInt(this.restarts.size());
		this.out.write(trailer.array(), 0, trailer.capacity());
		byte[] block = this.out.toByteArray();
		this.out.reset();
		this.restarts.clear();
		this.count = 0;
		this.lastKey = new byte[0];
		return block;
	}

}
