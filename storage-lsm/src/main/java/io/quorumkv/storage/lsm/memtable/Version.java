package io.quorumkv.storage.lsm.memtable;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import org.jspecify.annotations.Nullable;

/**
 * A memtable's version of a key: a record in its {@link MemArena}. At the record's
 * reference: {@code timestamp}, {@code expiresAt} ({@link Entry#NO_EXPIRY} when the
 * version does not expire), and a long holding the record's value capacity (high 32
 * bits), the tombstone flag (bit 31) and the value's length (low 31 bits); then the
 * value's bytes, {@code capacity} of them (a multiple of 8). The key is not in it: the
 * key's skip-list node holds it. A newer version is written over a record in place when
 * it {@link #fits}; the node's sequence lock guards that ({@link MemTable}).
 */
final class Version {

	/** The header's longs: timestamp, expiresAt, capacity/flag/length. */
	static final int HEADER = 3 * Long.BYTES;

	private static final int TIMESTAMP = 0;

	private static final int EXPIRES_AT = 1;

	private static final int META = 2;

	private static final long TOMBSTONE = 1L << 31;

	private static final int LENGTH_MASK = Integer.MAX_VALUE;

	/**
	 * Slack allowed in place: a shorter value is written over a record only while the
	 * record's capacity is at most twice its length plus this, so that a record never
	 * holds much more than the bytes that the memtable's size counts for it.
	 */
	static final int SLACK = 64;

	private Version() {
	}

	static int valueLength(Entry entry) {
		byte[] value = entry.value();
		return (value != null) ? value.length : 0;
	}

	/** A new record holding {@code entry}, with room for exactly its value (padded). */
	static long allocate(MemArena arena, Entry entry) {
		int capacity = MemArena.align(valueLength(entry));
		long ref = arena.allocate(HEADER + capacity);
		MemArena.Chunk chunk = arena.chunk(ref);
		int offset = MemArena.offset(ref);
		// Not yet published: the capacity once, then the entry.
		chunk.longs[(offset >>> 3) + META] = (long) capacity << 32;
		writeHeader(chunk, offset, entry);
		writeValue(chunk, offset, entry);
		return ref;
	}

	/** The capacity, flag and length of the record at {@code offset}. */
	static long meta(MemArena.Chunk chunk, int offset) {
		return (long) MemArena.LONGS.getOpaque(chunk.longs, (offset >>> 3) + META);
	}

	static int capacity(long meta) {
		return (int) (meta >>> 32);
	}

	static boolean isTombstone(long meta) {
		return (meta & TOMBSTONE) != 0;
	}

	/** The value's length, clamped to the capacity (a torn read stays in bounds). */
	static int length(long meta) {
		return Math.min((int) meta & LENGTH_MASK, capacity(meta));
	}

	/** The bytes a record of {@code meta} takes in the arena. */
	static int recordBytes(long meta) {
		return HEADER + capacity(meta);
	}

	/**
	 * Whether {@code entry} can be written over a record of {@code meta}: its value fits,
	 * and the capacity is not more than twice its length plus {@link #SLACK}.
	 */
	static boolean fits(long meta, Entry entry) {
		int length = valueLength(entry);
		int capacity = capacity(meta);
		return length <= capacity && capacity <= 2L * length + SLACK;
	}

	/**
	 * Writes the timestamp, expiry, flag and length of {@code entry} over the record; the
	 * caller holds its node's lock unless the record is not yet published.
	 */
	static void writeHeader(MemArena.Chunk chunk, int offset, Entry entry) {
		int base = offset >>> 3;
		long capacity = (long) capacity(meta(chunk, offset)) << 32;
		MemArena.LONGS.setOpaque(chunk.longs, base + TIMESTAMP, entry.timestamp());
		MemArena.LONGS.setOpaque(chunk.longs, base + EXPIRES_AT, entry.expiresAt());
		MemArena.LONGS.setOpaque(chunk.longs, base + META,
				capacity | ((entry.value() == null) ? TOMBSTONE : 0) | valueLength(entry));
	}

	/** Writes the value's bytes of {@code entry} over the record (see writeHeader). */
	static void writeValue(MemArena.Chunk chunk, int offset, Entry entry) {
		byte[] value = entry.value();
		if (value != null) {
			MemorySegment.copy(value, 0, chunk.bytes, ValueLayout.JAVA_BYTE, offset + HEADER, value.length);
		}
	}

	private static long timestamp(MemArena.Chunk chunk, int offset) {
		return (long) MemArena.LONGS.getOpaque(chunk.longs, (offset >>> 3) + TIMESTAMP);
	}

	private static long expiresAt(MemArena.Chunk chunk, int offset) {
		return (long) MemArena.LONGS.getOpaque(chunk.longs, (offset >>> 3) + EXPIRES_AT);
	}

	/** A copy of the value of {@code meta} (null for a tombstone); in bounds if torn. */
	private static byte @Nullable [] value(MemArena.Chunk chunk, int offset, long meta) {
		if (isTombstone(meta)) {
			return null;
		}
		byte[] value = new byte[length(meta)];
		MemorySegment.copy(chunk.bytes, ValueLayout.JAVA_BYTE, offset + HEADER, value, 0, value.length);
		return value;
	}

	/**
	 * An unsynchronized read of the record, as an entry of {@code key} (given up to it):
	 * torn if a writer is inside its node's lock, which the caller's stamp check tells
	 * ({@link MemTable}). A torn copy is still a valid entry, so that the check can come
	 * after: its value is in bounds and a tombstone never expires, whatever was read.
	 */
	static Entry read(MemArena.Chunk chunk, int offset, byte[] key) {
		long meta = meta(chunk, offset);
		byte[] value = value(chunk, offset, meta);
		long timestamp = timestamp(chunk, offset);
		long expiresAt = expiresAt(chunk, offset);
		return Entry.wrap(key, value, timestamp, (value != null) ? expiresAt : Entry.NO_EXPIRY);
	}

	/**
	 * {@link EntryOrder} of {@code entry} against the record of the same key, without
	 * decoding it; the caller holds its node's lock.
	 */
	static int compare(Entry entry, MemArena.Chunk chunk, int offset) {
		int byTime = Long.compare(entry.timestamp(), timestamp(chunk, offset));
		if (byTime != 0) {
			return byTime;
		}
		byte @Nullable [] value = entry.value();
		long meta = meta(chunk, offset);
		boolean tombstone = isTombstone(meta);
		if (value == null || tombstone) {
			return Boolean.compare(value == null, tombstone);
		}
		int length = length(meta);
		long start = offset + HEADER;
		long mismatch = MemorySegment.mismatch(MemorySegment.ofArray(value), 0, value.length, chunk.bytes, start,
				start + length);
		int byValue;
		if (mismatch < 0) {
			byValue = 0;
		}
		else if (mismatch == value.length || mismatch == length) {
			byValue = Integer.compare(value.length, length);
		}
		else {
			byValue = Integer.compare(Byte.toUnsignedInt(value[(int) mismatch]),
					Byte.toUnsignedInt(chunk.bytes.get(ValueLayout.JAVA_BYTE, start + mismatch)));
		}
		// Equal values: the earlier expiry wins (EntryOrder).
		return (byValue != 0) ? byValue : Long.compare(expiresAt(chunk, offset), entry.expiresAt());
	}

}
