package io.quorumkv.storage.lsm.memtable;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;

/**
 * A memtable's version of a key in one byte array: {@code timestamp} (8 bytes,
 * big-endian), a flag byte ({@code 1} for a tombstone, {@code 0} for a value), then the
 * value's bytes (none for a tombstone). The key is not in it: the memtable's index holds
 * it once per key. Arrays are never changed after {@link #encode}.
 */
final class Version {

	static final int HEADER = Long.BYTES + 1;

	private static final byte VALUE = 0;

	private static final byte TOMBSTONE = 1;

	private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

	private Version() {
	}

	static byte[] encode(Entry entry) {
		byte[] value = entry.value();
		byte[] version = new byte[HEADER + ((value != null) ? value.length : 0)];
		LONGS.set(version, 0, entry.timestamp());
		version[Long.BYTES] = (value != null) ? VALUE : TOMBSTONE;
		if (value != null) {
			System.arraycopy(value, 0, version, HEADER, value.length);
		}
		return version;
	}

	static Entry decode(byte[] key, byte[] version) {
		long timestamp = timestamp(version);
		if (isTombstone(version)) {
			return Entry.tombstone(key, timestamp);
		}
		return Entry.value(key, Arrays.copyOfRange(version, HEADER, version.length), timestamp);
	}

	static long timestamp(byte[] version) {
		return (long) LONGS.get(version, 0);
	}

	static boolean isTombstone(byte[] version) {
		return version[Long.BYTES] == TOMBSTONE;
	}

	/** The value's length, 0 for a tombstone (as {@link Entry#sizeInBytes} counts it). */
	static int valueLength(byte[] version) {
		return version.length - HEADER;
	}

	/** {@link EntryOrder} on two versions of the same key, without decoding them. */
	static int compare(byte[] a, byte[] b) {
		int byTime = Long.compare(timestamp(a), timestamp(b));
		if (byTime != 0) {
			return byTime;
		}
		boolean tombstoneA = isTombstone(a);
		boolean tombstoneB = isTombstone(b);
		if (tombstoneA || tombstoneB) {
			return Boolean.compare(tombstoneA, tombstoneB);
		}
		return Arrays.compareUnsigned(a, HEADER, a.length, b, HEADER, b.length);
	}

}
