package io.quorumkv.storage.lsm.sstable;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Unsigned LEB128 varints (7 bits a byte, low group first), at most 5 bytes for an int.
 */
final class Varints {

	private Varints() {
	}

	static void write(ByteArrayOutputStream out, int value) {
		int v = value;
		while ((v & ~0x7F) != 0) {
			out.write((v & 0x7F) | 0x80);
			v >>>= 7;
		}
		out.write(v);
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
