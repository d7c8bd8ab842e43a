package io.quorumkv.storage.lsm.sstable;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Unsigned LEB128 varints (7 bits a byte, low group first), at most 5 bytes for an int.
 */
final class Varints {

	private Varints() {
	}

	/** The most bytes an int's varint takes. */
	static final int MAX_BYTES = 5;

	/**
	 * Writes {@code value} at {@code at} of {@code out}, which has room for
	 * {@link #MAX_BYTES} there.
	 * @return the index after it
	 */
	static int write(byte[] out, int at, int value) {
		int v = value;
		int i = at;
		while ((v & ~0x7F) != 0) {
			out[i++] = (byte) ((v & 0x7F) | 0x80);
			v >>>= 7;
		}
		out[i++] = (byte) v;
		return i;
	}

	/**
	 * Reads a varint at {@code pos[0]} of {@code bytes} below {@code limit}, advancing
	 * {@code pos[0]}.
	 * @return the value, or -1 when it is malformed or runs past {@code limit}
	 */
	static int read(MemorySegment bytes, int[] pos, int limit) {
		int result = 0;
		for (int shift = 0; shift < 35; shift += 7) {
			if (pos[0] >= limit) {
				return -1;
			}
			int b = bytes.get(ValueLayout.JAVA_BYTE, pos[0]++) & 0xFF;
			result |= (b & 0x7F) << shift;
			if ((b & 0x80) == 0) {
				return (result < 0) ? -1 : result;
			}
		}
		return -1;
	}

}
