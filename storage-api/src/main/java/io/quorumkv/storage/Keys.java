package io.quorumkv.storage;

import java.util.Arrays;
import java.util.Comparator;

/**
 * Key order: keys compare as unsigned byte strings, a prefix before its extensions. Every
 * backend stores and scans in this order.
 */
public final class Keys {

	/** Unsigned lexicographic order of byte strings. */
	public static final Comparator<byte[]> ORDER = Arrays::compareUnsigned;

	private static final int DISPLAY_LIMIT = 64;

	private Keys() {
	}

	public static int compare(byte[] a, byte[] b) {
		return Arrays.compareUnsigned(a, b);
	}

	/**
	 * A printable form for logs and errors: printable ASCII as is, other bytes as
	 * {@code \xNN}, cut after 64 bytes.
	 */
	public static String toDisplayString(byte[] key) {
		StringBuilder out = new StringBuilder(Math.min(key.length, DISPLAY_LIMIT) + 8);
		for (int i = 0; i < key.length && i < DISPLAY_LIMIT; i++) {
			int b = key[i] & 0xFF;
			if (b >= 0x20 && b < 0x7F && b != '\\') {
				out.append((char) b);
			}
			else {
				out.append(String.format("\\x%02x", b));
			}
		}
		if (key.length > DISPLAY_LIMIT) {
			out.append("...(").append(key.length).append(" bytes)");
		}
		return out.toString();
	}

}
