package io.quorumkv.ycsb;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;

/**
 * How a YCSB record (a map of field names to byte strings) becomes one value, and back.
 * The encoding is self-delimiting, so names and values may hold any bytes ({@code \n},
 * zero bytes, separators of other formats):
 *
 * <pre>
 * value := u32 count, field*count   fields in ascending name order, each name once
 * field := u32 nameLength, name    the name's UTF-8 bytes
 *          u32 valueLength, value  the value's bytes
 * </pre>
 *
 * {@code u32} is a big-endian unsigned 32-bit number (at most 2^31 - 1 here). Decoding
 * checks every length against the bytes left and refuses a duplicate or unordered name, a
 * value cut short anywhere (the count catches a cut between two fields) and bytes after
 * the last field, so a value that is not a record of ours fails loudly instead of reading
 * as other fields. YCSB's default record (10 fields of 100 bytes, names
 * {@code field0}..{@code field9}) encodes to 1,140 bytes.
 */
public final class FieldCodec {

	private FieldCodec() {
	}

	/** Encodes YCSB's values (each {@link ByteIterator} is consumed). */
	public static byte[] encode(Map<String, ByteIterator> fields) {
		return encodeBytes(bytesOf(fields));
	}

	/** Encodes fields given as byte arrays. */
	public static byte[] encodeBytes(Map<String, byte[]> fields) {
		Map<String, byte[]> sorted = (fields instanceof TreeMap) ? fields : new TreeMap<>(fields);
		ByteArrayOutputStream out = new ByteArrayOutputStream(64 + 128 * sorted.size());
		writeLength(out, sorted.size());
		sorted.forEach((name, value) -> {
			byte[] nameBytes = name.getBytes(StandardCharsets.UTF_8);
			writeLength(out, nameBytes.length);
			out.writeBytes(nameBytes);
			writeLength(out, value.length);
			out.writeBytes(value);
		});
		return out.toByteArray();
	}

	/**
	 * The fields of an encoded record, in name order.
	 * @throws IllegalArgumentException when {@code value} is not such a record
	 */
	public static TreeMap<String, byte[]> decode(byte[] value) {
		ByteBuffer in = ByteBuffer.wrap(value);
		if (in.remaining() < Integer.BYTES) {
			throw new IllegalArgumentException("a record of " + value.length + " bytes has no field count");
		}
		int count = in.getInt();
		// Each field takes at least 8 bytes: a count beyond that is not ours.
		if (count < 0 || count > in.remaining() / 8) {
			throw new IllegalArgumentException(
					Integer.toUnsignedString(count) + " fields cannot fit in " + value.length + " bytes");
		}
		TreeMap<String, byte[]> fields = new TreeMap<>();
		String previous = null;
		for (int i = 0; i < count; i++) {
			String name = new String(read(in, "name"), StandardCharsets.UTF_8);
			if (previous != null && previous.compareTo(name) >= 0) {
				throw new IllegalArgumentException("field " + name + " after " + previous + ": not in ascending order");
			}
			fields.put(name, read(in, "value of " + name));
			previous = name;
		}
		if (in.hasRemaining()) {
			throw new IllegalArgumentException(in.remaining() + " bytes after the last of " + count + " fields");
		}
		return fields;
	}

	/**
	 * An update's new value: {@code current}'s fields with {@code updates} written over
	 * them (a field not in {@code updates} keeps its value), or {@code updates} alone
	 * when there is no current value.
	 */
	public static byte[] merge(byte @Nullable [] current, Map<String, ByteIterator> updates) {
		TreeMap<String, byte[]> merged = (current != null) ? decode(current) : new TreeMap<>();
		updates.forEach((name, value) -> merged.put(name, value.toArray()));
		return encodeBytes(merged);
	}

	/**
	 * {@link #merge(byte[], Map)} of fields already read out of YCSB's iterators: a
	 * conditional update may merge the same fields more than once.
	 */
	public static byte[] mergeBytes(byte @Nullable [] current, Map<String, byte[]> updates) {
		TreeMap<String, byte[]> merged = (current != null) ? decode(current) : new TreeMap<>();
		merged.putAll(updates);
		return encodeBytes(merged);
	}

	/** YCSB's values as byte arrays (each {@link ByteIterator} is consumed). */
	public static Map<String, byte[]> bytesOf(Map<String, ByteIterator> fields) {
		Map<String, byte[]> bytes = new TreeMap<>();
		fields.forEach((name, value) -> bytes.put(name, value.toArray()));
		return bytes;
	}

	/**
	 * Puts the decoded fields YCSB asked for into its result map.
	 * @param fields the names wanted, or null for all
	 */
	public static void copyInto(Map<String, byte[]> decoded, @Nullable Set<String> fields,
			Map<String, ByteIterator> result) {
		decoded.forEach((name, value) -> {
			if (fields == null || fields.contains(name)) {
				result.put(name, new ByteArrayByteIterator(value));
			}
		});
	}

	private static void writeLength(ByteArrayOutputStream out, int length) {
		out.write(length >>> 24);
		out.write(length >>> 16);
		out.write(length >>> 8);
		out.write(length);
	}

	private static byte[] read(ByteBuffer in, String what) {
		if (in.remaining() < Integer.BYTES) {
			throw new IllegalArgumentException("truncated length of a " + what + " at byte " + in.position());
		}
		int length = in.getInt();
		if (length < 0 || length > in.remaining()) {
			throw new IllegalArgumentException("a " + what + " of " + Integer.toUnsignedString(length)
					+ " bytes at byte " + (in.position() - 4) + " runs past the end (" + in.remaining() + " left)");
		}
		byte[] bytes = new byte[length];
		in.get(bytes);
		return bytes;
	}

}
