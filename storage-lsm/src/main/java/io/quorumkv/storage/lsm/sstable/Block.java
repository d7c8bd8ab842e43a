package io.quorumkv.storage.lsm.sstable;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Keys;
import org.jspecify.annotations.Nullable;

/**
 * A decoded data block (see {@code docs/formats/sstable.md}).
 *
 * <pre>
 * block    = entry* | u32 restartOffset * n | u32 n     (then, in the file, the trailer)
 * entry    = varint shared | varint unshared | varint valueTag | i64 timestamp
 *            | (version 2, valueTag = 1) i64 expiresAt | varint valueLength
 *            | unshared key bytes | value bytes
 * valueTag = version 1: 0 for a tombstone, valueLength + 1 for a value
 *            version 2: 0 for a tombstone, 1 for an expiring value (its expiry and
 *            length follow the timestamp), valueLength + 2 for a value that does not expire
 * </pre>
 *
 * Invariants: keys strictly ascending; an entry at a restart offset has {@code shared ==
 * 0}; every length is bound-checked on decode, a violation throws
 * {@link BlockFormatException} (the table turns it into a corruption error with file and
 * offset). The checksum was verified before a {@code Block} is built.
 *
 * <p>
 * The bytes are read where they are: in a table's mapping for a block stored raw (no
 * copy; the caller pinned the table for as long as it uses the block), in the array a
 * codec decoded otherwise. Entries come out as copies of their own.
 */
final class Block {

	private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

	private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

	private static final byte[] EMPTY = new byte[0];

	private static final Predicate<byte[]> ALL = (key) -> true;

	private final MemorySegment data;

	private final int[] restarts;

	private final int entriesEnd;

	private final int version;

	private Block(MemorySegment data, int[] restarts, int entriesEnd, int version) {
		this.data = data;
		this.restarts = restarts;
		this.entriesEnd = entriesEnd;
		this.version = version;
	}

	/** A block of a table in the {@link TableFormat#CURRENT current} format. */
	static Block decode(byte[] data) {
		return decode(data, TableFormat.CURRENT);
	}

	/** A block of a table of format {@code version}. */
	static Block decode(byte[] data, int version) {
		return decode(MemorySegment.ofArray(data), version);
	}

	/**
	 * A block of a table of format {@code version} read in place from {@code data}, which
	 * must stay readable while the block is used.
	 */
	static Block decode(MemorySegment data, int version) {
		if (data.byteSize() < 4 || data.byteSize() > Integer.MAX_VALUE) {
			throw new BlockFormatException("block of " + data.byteSize() + " bytes");
		}
		int length = (int) data.byteSize();
		int n = data.get(INT, length - 4);
		if (n < 1 || (long) n * 4 + 4 > length) {
			throw new BlockFormatException("bad restart count " + n);
		}
		int entriesEnd = length - 4 - 4 * n;
		int[] restarts = new int[n];
		for (int i = 0; i < n; i++) {
			restarts[i] = data.get(INT, entriesEnd + 4 * i);
			if (restarts[i] < 0 || restarts[i] >= entriesEnd || (i > 0 && restarts[i] <= restarts[i - 1])) {
				throw new BlockFormatException("bad restart offset " + restarts[i]);
			}
		}
		if (restarts[0] != 0) {
			throw new BlockFormatException("first restart is not at offset 0");
		}
		return new Block(data, restarts, entriesEnd, version);
	}

	/**
	 * The entry of {@code key} in this block, or {@code null}. Walks the one restart
	 * interval that may hold it, comparing keys in a buffer, and copies out the entry it
	 * finds only.
	 */
	@Nullable Entry find(byte[] key) {
		int lo = lastRestartAtOrBefore(key);
		int end = (lo + 1 < this.restarts.length) ? this.restarts[lo + 1] : this.entriesEnd;
		byte[] current = EMPTY;
		int[] pos = { this.restarts[lo] };
		while (pos[0] < end) {
			Header header = header(pos, end, current.length);
			current = assembleKey(current, header, pos[0]);
			pos[0] += header.unshared();
			int cmp = Keys.compare(current, key);
			if (cmp >= 0) {
				if (cmp > 0) {
					return null;
				}
				byte[] value = (header.valueLength() >= 0) ? copy(pos[0], header.valueLength()) : null;
				// Both arrays were made by this call and are not used again.
				return Entry.wrap(current, value, header.timestamp(), header.expiresAt());
			}
			pos[0] += Math.max(0, header.valueLength());
		}
		return null;
	}

	/** Entries with a key {@code >= from}, in order. */
	List<Entry> entriesFrom(byte[] from) {
		return entriesFrom(from, ALL);
	}

	/**
	 * Entries with a key {@code >= from} that {@code keys} accepts, in order; the value
	 * of an entry it rejects is not read. {@code keys} is given a buffer it must not
	 * keep.
	 */
	List<Entry> entriesFrom(byte[] from, Predicate<byte[]> keys) {
		List<Entry> out = decodeRange(this.restarts[lastRestartAtOrBefore(from)], this.entriesEnd, keys);
		int first = 0;
		while (first < out.size() && Keys.compare(out.get(first).key(), from) < 0) {
			first++;
		}
		return (first == 0) ? out : out.subList(first, out.size());
	}

	/**
	 * The last restart whose key is {@code <= key} (the first restart when none is): the
	 * key, if present, is in its interval.
	 */
	private int lastRestartAtOrBefore(byte[] key) {
		int lo = 0;
		int hi = this.restarts.length - 1;
		while (lo < hi) {
			int mid = (lo + hi + 1) >>> 1;
			if (compareRestartKey(mid, key) <= 0) {
				lo = mid;
			}
			else {
				hi = mid - 1;
			}
		}
		return lo;
	}

	/** Restart {@code index}'s key against {@code key}, unsigned, read in place. */
	private int compareRestartKey(int index, byte[] key) {
		int[] pos = { this.restarts[index] };
		Header header = header(pos, this.entriesEnd, 0);
		if (header.shared() != 0) {
			throw new BlockFormatException("bad restart entry at " + this.restarts[index]);
		}
		int length = header.unshared();
		int common = Math.min(length, key.length);
		for (int i = 0; i < common; i++) {
			int cmp = Byte.compareUnsigned(this.data.get(ValueLayout.JAVA_BYTE, pos[0] + i), key[i]);
			if (cmp != 0) {
				return cmp;
			}
		}
		return Integer.compare(length, key.length);
	}

	/**
	 * The key of the entry whose header was just read and whose key bytes start at
	 * {@code at}: {@code previous} itself, overwritten, when the lengths match (its first
	 * {@code shared} bytes are the ones the entry reuses), else a new array.
	 */
	private byte[] assembleKey(byte[] previous, Header header, int at) {
		int keyLength = header.shared() + header.unshared();
		byte[] key = previous;
		if (key.length != keyLength) {
			key = new byte[keyLength];
			System.arraycopy(previous, 0, key, 0, header.shared());
		}
		MemorySegment.copy(this.data, ValueLayout.JAVA_BYTE, at, key, header.shared(), header.unshared());
		return key;
	}

	private byte[] copy(int at, int length) {
		byte[] out = new byte[length];
		MemorySegment.copy(this.data, ValueLayout.JAVA_BYTE, at, out, 0, length);
		return out;
	}

	/**
	 * The parts of an entry before its key bytes.
	 *
	 * @param valueLength -1 for a tombstone
	 */
	private record Header(int shared, int unshared, int valueLength, long timestamp, long expiresAt) {
	}

	/**
	 * Decodes the entry header at {@code pos[0]}, leaving {@code pos[0]} at its key
	 * bytes, and checks that its key and value end within {@code end}.
	 */
	private Header header(int[] pos, int end, int previousKeyLength) {
		int entryStart = pos[0];
		int shared = Varints.read(this.data, pos, end);
		int unshared = Varints.read(this.data, pos, end);
		int valueTag = Varints.read(this.data, pos, end);
		if (shared < 0 || unshared < 0 || valueTag < 0 || shared > previousKeyLength || shared + unshared == 0
				|| (long) pos[0] + 8 > end) {
			throw new BlockFormatException("bad entry at " + entryStart);
		}
		long timestamp = this.data.get(LONG, pos[0]);
		pos[0] += 8;
		long expiresAt = Entry.NO_EXPIRY;
		int valueLength;
		if (this.version == TableFormat.VERSION_1) {
			valueLength = valueTag - 1;
		}
		else if (valueTag == 1) {
			if ((long) pos[0] + 8 > end) {
				throw new BlockFormatException("bad entry at " + entryStart);
			}
			expiresAt = this.data.get(LONG, pos[0]);
			pos[0] += 8;
			valueLength = Varints.read(this.data, pos, end);
			if (valueLength < 0 || expiresAt == Entry.NO_EXPIRY) {
				throw new BlockFormatException("bad expiring entry at " + entryStart);
			}
		}
		else {
			valueLength = (valueTag == 0) ? -1 : valueTag - 2;
		}
		if ((long) pos[0] + unshared + Math.max(0, valueLength) > end) {
			throw new BlockFormatException("bad entry at " + entryStart);
		}
		return new Header(shared, unshared, valueLength, timestamp, expiresAt);
	}

	/** All entries, in order. */
	List<Entry> entries() {
		return entries(ALL);
	}

	/** The entries {@code keys} accepts, as {@link #entriesFrom(byte[], Predicate)}. */
	List<Entry> entries(Predicate<byte[]> keys) {
		return decodeRange(0, this.entriesEnd, keys);
	}

	/**
	 * Decodes the entries between two offsets. The key is assembled in a buffer kept from
	 * one entry to the next while its length stays the same (keys of one width: no
	 * allocation for a key {@code keys} rejects); the buffer holds the previous key,
	 * whose first {@code shared} bytes the next key reuses. An accepted entry gets a copy
	 * of the key and its value copied once, straight out of the block, and
	 * {@link Entry#wrap} keeps both.
	 */
	private List<Entry> decodeRange(int start, int end, Predicate<byte[]> keys) {
		List<Entry> out = new ArrayList<>(BlockBuilder.RESTART_INTERVAL);
		byte[] key = EMPTY;
		int[] pos = { start };
		while (pos[0] < end) {
			Header header = header(pos, end, key.length);
			key = assembleKey(key, header, pos[0]);
			pos[0] += header.unshared();
			int valueLength = header.valueLength();
			if (!keys.test(key)) {
				pos[0] += Math.max(0, valueLength);
				continue;
			}
			byte @Nullable [] value = null;
			if (valueLength >= 0) {
				value = copy(pos[0], valueLength);
				pos[0] += valueLength;
			}
			out.add(Entry.wrap(key.clone(), value, header.timestamp(), header.expiresAt()));
		}
		return out;
	}

	/** A structural violation inside a block whose checksum matched. */
	static final class BlockFormatException extends RuntimeException {

		BlockFormatException(String message) {
			super(message);
		}

	}

}
