package io.quorumkv.storage.lsm.sstable;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

import io.quorumkv.storage.Entry;

/**
 * Builds one data block in the {@link TableFormat#CURRENT current} format (layout in
 * {@link Block}): entries in strictly ascending key order, each key prefix-compressed
 * against the previous one, with a full key (a restart point) every
 * {@link #RESTART_INTERVAL} entries so that a reader can binary-search.
 */
final class BlockBuilder {

	static final int RESTART_INTERVAL = 16;

	/** What a block's buffer starts with and shrinks back to: a block and a bit. */
	private static final int INITIAL_CAPACITY = 4096 + 512;

	/**
	 * The most bytes an entry takes beyond its key and value: three varints, two longs, a
	 * varint.
	 */
	private static final int MAX_ENTRY_OVERHEAD = 3 * Varints.MAX_BYTES + 2 * Long.BYTES + Varints.MAX_BYTES;

	private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

	private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);

	// A plain array, not a ByteArrayOutputStream: its writes are synchronized, a lock per
	// byte, which was a quarter of compaction's CPU.
	private byte[] buffer = new byte[INITIAL_CAPACITY];

	private int size;

	private int[] restarts = new int[16];

	private int restartCount;

	private byte[] lastKey = new byte[0];

	private int count;

	void add(Entry entry) {
		byte[] key = entry.key();
		int shared = 0;
		if (this.count % RESTART_INTERVAL == 0) {
			if (this.restartCount == this.restarts.length) {
				this.restarts = Arrays.copyOf(this.restarts, 2 * this.restartCount);
			}
			this.restarts[this.restartCount++] = this.size;
		}
		else {
			shared = Arrays.mismatch(this.lastKey, key);
			shared = (shared < 0) ? key.length : Math.min(shared, key.length);
		}
		byte[] value = entry.value();
		int unshared = key.length - shared;
		ensure(MAX_ENTRY_OVERHEAD + unshared + ((value != null) ? value.length : 0));
		byte[] out = this.buffer;
		int at = this.size;
		at = Varints.write(out, at, shared);
		at = Varints.write(out, at, unshared);
		at = Varints.write(out, at, (value == null) ? 0 : entry.expires() ? 1 : value.length + 2);
		LONG.set(out, at, entry.timestamp());
		at += Long.BYTES;
		if (entry.expires()) {
			LONG.set(out, at, entry.expiresAt());
			at += Long.BYTES;
			at = Varints.write(out, at, value.length);
		}
		System.arraycopy(key, shared, out, at, unshared);
		at += unshared;
		if (value != null) {
			System.arraycopy(value, 0, out, at, value.length);
			at += value.length;
		}
		this.size = at;
		this.lastKey = key;
		this.count++;
	}

	private void ensure(int more) {
		if (this.size + more > this.buffer.length) {
			this.buffer = Arrays.copyOf(this.buffer, Math.max(2 * this.buffer.length, this.size + more));
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
		return this.size + 4 * this.restartCount + 4;
	}

	/** The block contents (without the checksum trailer); the builder is reset. */
	byte[] finish() {
		ensure(4 * this.restartCount + 4);
		for (int i = 0; i < this.restartCount; i++) {
			INT.set(this.buffer, this.size, this.restarts[i]);
			this.size += 4;
		}
		INT.set(this.buffer, this.size, this.restartCount);
		this.size += 4;
		byte[] block = Arrays.copyOf(this.buffer, this.size);
		if (this.buffer.length > 4 * INITIAL_CAPACITY) {
			// A block of a large value: its buffer is not kept for the next block.
			this.buffer = new byte[INITIAL_CAPACITY];
		}
		this.size = 0;
		this.restartCount = 0;
		this.count = 0;
		this.lastKey = new byte[0];
		return block;
	}

}
