package io.quorumkv.storage.lsm.memtable;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import org.jspecify.annotations.Nullable;

/**
 * A memtable's version of a key in one byte array: {@code timestamp} and
 * {@code expiresAt} (8 bytes each, big-endian; {@link Entry#NO_EXPIRY} when the version
 * does not expire), a flag byte ({@code 1} for a tombstone, {@code 0} for a value), then
 * the value's bytes (none for a tombstone). The key is not in it: the memtable's index
 * holds it once per key. A newer version of the same value length may be written over an
 * array ({@link #overwrite}); {@link Slots} guards that with its sequence locks.
 */
final class Version {

	private static final int TIMESTAMP = 0;

	private static final int EXPIRES_AT = TIMESTAMP + Long.BYTES;

	private static final int FLAG = EXPIRES_AT + Long.BYTES;

	static final int HEADER = FLAG + 1;

	private static final byte VALUE = 0;

	private static final byte TOMBSTONE = 1;

	private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

	private Version() {
	}

	/** A new version of {@code entry}. */
	static byte[] encode(Entry entry) {
		byte[] value = entry.value();
		byte[] version = new byte[HEADER + ((value != null) ? value.length : 0)];
		overwrite(version, entry);
		return version;
	}

	/**
	 * Whether {@link #overwrite} can put {@code entry} into {@code version}: the same
	 * value length (a tombstone's is 0).
	 */
	static boolean fits(byte[] version, Entry entry) {
		byte[] value = entry.value();
		return valueLength(version) == ((value != null) ? value.length : 0);
	}

	/**
	 * Writes {@code entry} over {@code version}, of the right length ({@link #fits}); the
	 * caller holds its slot's lock unless the array is not yet published.
	 */
	static void overwrite(byte[] version, Entry entry) {
		byte[] value = entry.value();
		LONGS.set(version, TIMESTAMP, entry.timestamp());
		LONGS.set(version, EXPIRES_AT, entry.expiresAt());
		version[FLAG] = (value != null) ? VALUE : TOMBSTONE;
		if (value != null) {
			System.arraycopy(value, 0, version, HEADER, value.length);
		}
	}

	/**
	 * The entry of {@code key} in {@code version}: copies that may be torn if a writer
	 * was inside the slot's lock meanwhile, which the slot's stamp tells.
	 */
	static Entry decode(byte[] key, byte[] version) {
		long timestamp = timestamp(version);
		if (isTombstone(version)) {
			return Entry.tombstone(key, timestamp);
		}
		// The key is the caller's (or the table's), the value a copy of our own.
		return Entry.wrap(key.clone(), Arrays.copyOfRange(version, HEADER, version.length), timestamp,
				(long) LONGS.get(version, EXPIRES_AT));
	}

	static long timestamp(byte[] version) {
		return (long) LONGS.get(version, TIMESTAMP);
	}

	static boolean isTombstone(byte[] version) {
		return version[FLAG] == TOMBSTONE;
	}

	/** The value's length, 0 for a tombstone (as {@link Entry#sizeInBytes} counts it). */
	static int valueLength(byte[] version) {
		return version.length - HEADER;
	}

	/**
	 * {@link EntryOrder} of {@code entry} against {@code version} of the same key,
	 * without decoding it; the caller holds its slot's lock.
	 */
	static int compare(Entry entry, byte[] version) {
		int byTime = Long.compare(entry.timestamp(), timestamp(version));
		if (byTime != 0) {
			return byTime;
		}
		byte @Nullable [] value = entry.value();
		boolean tombstone = isTombstone(version);
		if (value == null || tombstone) {
			return Boolean.compare(value == null, tombstone);
		}
		int byValue = Arrays.compareUnsigned(value, 0, value.length, version, HEADER, version.length);
		// Equal values: the earlier expiry wins (EntryOrder).
		return (byValue != 0) ? byValue : Long.compare((long) LONGS.get(version, EXPIRES_AT), entry.expiresAt());
	}

}
