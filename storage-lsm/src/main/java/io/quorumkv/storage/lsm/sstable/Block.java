package io.quorumkv.storage.lsm.sstable;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

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
 */
final class Block {

	private final byte[] data;

	private final int[] restarts;

	private final int entriesEnd;

	private final int version;

	private Block(byte[] data, int[] restarts, int entriesEnd, int version) {
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
		if (data.length < 4) {
			throw new BlockFormatException("block shorter than its trailer");
		}
		ByteBuffer buffer = ByteBuffer.wrap(data);
		int n = buffer.getInt(data.length - 4);
		if (n < 1 || (long) n * 4 + 4 > data.length) {
			throw new BlockFormatException("bad restart count " + n);
		}
		int entriesEnd = data.length - 4 - 4 * n;
		int[] restarts = new int[n];
		for (int i = 0; i < n; i++) {
			restarts[i] = buffer.getInt(entriesEnd + 4 * i);
			if (restarts[i] < 0 || restarts[i] >= entriesEnd || (i > 0 && restarts[i] <= restarts[i - 1])) {
				throw new BlockFormatException("bad restart offset " + restarts[i]);
			}
		}
		if (restarts[0] != 0) {
			throw new BlockFormatException("first restart is not at offset 0");
		}
		return new Block(data, restarts, entriesEnd, version);
	}

	/** The entry of {@code key} in this block, or {@code null}. */
	@Nullable Entry find(byte[] key) {
		for (Entry e : entriesFrom(key, RestartSearch.ONE_INTERVAL)) {
			int cmp = Keys.compare(e.key(), key);
			if (cmp >= 0) {
				return (cmp == 0) ? e : null;
			}
		}
		return null;
	}

	/** Entries with a key {@code >= from}, in order. */
	List<Entry> entriesFrom(byte[] from) {
		List<Entry> out = new ArrayList<>();
		for (Entry e : entriesFrom(from, RestartSearch.TO_END)) {
			if (Keys.compare(e.key(), from) >= 0) {
				out.add(e);
			}
		}
		return out;
	}

	private enum RestartSearch {

		ONE_INTERVAL, TO_END

	}

	private List<Entry> entriesFrom(byte[] from, RestartSearch search) {
		// The last restart whose key is <= from: the key, if present, is in its interval.
		int lo = 0;
		int hi = this.restarts.length - 1;
		while (lo < hi) {
			int mid = (lo + hi + 1) >>> 1;
			if (Keys.compare(restartKey(mid), from) <= 0) {
				lo = mid;
			}
			else {
				hi = mid - 1;
			}
		}
		int end = (search == RestartSearch.ONE_INTERVAL && lo + 1 < this.restarts.length) ? this.restarts[lo + 1]
				: this.entriesEnd;
		return decodeRange(this.restarts[lo], end);
	}

	private byte[] restartKey(int index) {
		int[] pos = { this.restarts[index] };
		Header header = header(pos, this.entriesEnd, 0);
		if (header.shared() != 0) {
			throw new BlockFormatException("bad restart entry at " + this.restarts[index]);
		}
		return java.util.Arrays.copyOfRange(this.data, pos[0], pos[0] + header.unshared());
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
		long timestamp = ByteBuffer.wrap(this.data, pos[0], 8).getLong();
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
			expiresAt = ByteBuffer.wrap(this.data, pos[0], 8).getLong();
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
		return decodeRange(0, this.entriesEnd);
	}

	/**
	 * Decodes the entries between two offsets. The key and the value are assembled in
	 * buffers kept from one entry to the next while their lengths stay the same (keys of
	 * one width, values of one size: no allocation), since {@link Entry}'s constructor
	 * copies them anyway; the key buffer holds the previous key, whose first
	 * {@code shared} bytes the next key reuses.
	 */
	private List<Entry> decodeRange(int start, int end) {
		List<Entry> out = new ArrayList<>(BlockBuilder.RESTART_INTERVAL);
		byte[] key = new byte[0];
		byte[] value = new byte[0];
		int[] pos = { start };
		while (pos[0] < end) {
			Header header = header(pos, end, key.length);
			int keyLength = header.shared() + header.unshared();
			if (key.length != keyLength) {
				byte[] resized = new byte[keyLength];
				System.arraycopy(key, 0, resized, 0, header.shared());
				key = resized;
			}
			System.arraycopy(this.data, pos[0], key, header.shared(), header.unshared());
			pos[0] += header.unshared();
			int valueLength = header.valueLength();
			if (valueLength >= 0) {
				if (value.length != valueLength) {
					value = new byte[valueLength];
				}
				System.arraycopy(this.data, pos[0], value, 0, valueLength);
				pos[0] += valueLength;
			}
			out.add(new Entry(key, (valueLength >= 0) ? value : null, header.timestamp(), header.expiresAt()));
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
