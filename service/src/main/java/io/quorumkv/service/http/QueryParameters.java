package io.quorumkv.service.http;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * The query string of a request, percent-decoded once and strictly.
 *
 * <p>
 * RFC 3986 rules: {@code %XX} is a byte, anything else is itself ({@code +} is a plus,
 * not a space; a raw byte is that byte). A malformed escape, a parameter given twice, or
 * a decoded value that is not UTF-8 is a 400 naming the parameter. Unknown parameters are
 * ignored.
 */
final class QueryParameters {

	/** The parameters the API reads, matched without building a name per request. */
	private static final String[] NAMES = { "id", "replicas", "ack", "from", "start", "end", "after", "limit", "ttl" };

	private final Map<String, byte[]> values;

	private QueryParameters(Map<String, byte[]> values) {
		this.values = values;
	}

	static QueryParameters parse(@Nullable String rawQuery) {
		Map<String, byte[]> values = new HashMap<>(4);
		if (rawQuery == null || rawQuery.isEmpty()) {
			return new QueryParameters(values);
		}
		int start = 0;
		while (start <= rawQuery.length()) {
			int end = rawQuery.indexOf('&', start);
			if (end < 0) {
				end = rawQuery.length();
			}
			if (end > start) {
				int eq = rawQuery.indexOf('=', start);
				boolean hasValue = eq >= 0 && eq < end;
				String name = name(rawQuery, start, hasValue ? eq : end);
				byte[] value = hasValue ? decode(rawQuery, eq + 1, end, name) : new byte[0];
				if (values.putIfAbsent(name, value) != null) {
					throw ApiException.badRequest("parameter '" + name + "' is given more than once");
				}
			}
			start = end + 1;
		}
		return new QueryParameters(values);
	}

	/**
	 * A whole number from 1 to {@code max} in decimal digits only (no sign, no spaces);
	 * anything else is a 400 saying {@code message}.
	 */
	static long positive(String text, long max, String message) {
		if (text.isEmpty() || text.length() > 18 || !text.chars().allMatch((c) -> c >= '0' && c <= '9')) {
			throw ApiException.badRequest(message);
		}
		long value = Long.parseLong(text);
		if (value < 1 || value > max) {
			throw ApiException.badRequest(message);
		}
		return value;
	}

	/** The decoded bytes of a parameter, or null when absent. */
	byte @Nullable [] bytes(String name) {
		return this.values.get(name);
	}

	/** The decoded parameter as UTF-8 text, or null when absent. */
	@Nullable String text(String name) {
		byte[] raw = this.values.get(name);
		if (raw == null) {
			return null;
		}
		return isAscii(raw) ? new String(raw, StandardCharsets.ISO_8859_1) : utf8(raw, name);
	}

	/** A required, non-empty key parameter, checked for UTF-8 and size. */
	byte[] key(String name, int maxKeySize) {
		byte[] raw = this.values.get(name);
		if (raw == null || raw.length == 0) {
			throw ApiException.badRequest("parameter '" + name + "' is required and must not be empty");
		}
		checkKey(raw, name, maxKeySize);
		return raw;
	}

	/** An optional key parameter; absent or empty means unbounded. */
	byte @Nullable [] optionalKey(String name, int maxKeySize) {
		byte[] raw = this.values.get(name);
		if (raw == null || raw.length == 0) {
			return null;
		}
		checkKey(raw, name, maxKeySize);
		return raw;
	}

	private static void checkKey(byte[] raw, String name, int maxKeySize) {
		if (raw.length > maxKeySize) {
			throw ApiException.badRequest(
					"parameter '" + name + "' is " + raw.length + " bytes; the limit is " + maxKeySize + " bytes");
		}
		if (!isAscii(raw)) {
			utf8(raw, name);
		}
	}

	private static boolean isAscii(byte[] raw) {
		for (byte b : raw) {
			if (b < 0) {
				return false;
			}
		}
		return true;
	}

	/** The decoded name of the parameter at {@code [from, to)}. */
	private static String name(String query, int from, int to) {
		for (String known : NAMES) {
			if (known.length() == to - from && query.startsWith(known, from)) {
				return known;
			}
		}
		return new String(decode(query, from, to, "parameter name"), StandardCharsets.UTF_8);
	}

	private static String utf8(byte[] raw, String name) {
		try {
			return StandardCharsets.UTF_8.newDecoder()
				.onMalformedInput(CodingErrorAction.REPORT)
				.onUnmappableCharacter(CodingErrorAction.REPORT)
				.decode(ByteBuffer.wrap(raw))
				.toString();
		}
		catch (CharacterCodingException ex) {
			throw ApiException.badRequest("parameter '" + name + "' is not valid UTF-8 after percent-decoding");
		}
	}

	private static byte[] decode(String s, int from, int to, String what) {
		// The server hands the request line over byte for byte (one char per byte,
		// ISO-8859-1):
		// raw non-ASCII bytes are kept as bytes, so raw UTF-8 works and raw garbage fails
		// the
		// UTF-8 check like an escaped one.
		int percent = s.indexOf('%', from);
		if (percent < 0 || percent >= to) {
			byte[] bytes = new byte[to - from];
			for (int i = from; i < to; i++) {
				char c = s.charAt(i);
				// as ISO-8859-1 encodes: a char above 0xFF becomes '?'
				bytes[i - from] = (c <= 0xFF) ? (byte) c : (byte) '?';
			}
			return bytes;
		}
		ByteArrayOutputStream out = new ByteArrayOutputStream(to - from);
		for (int i = from; i < to; i++) {
			char c = s.charAt(i);
			if (c == '%') {
				int hi = (i + 2 < to) ? Character.digit(s.charAt(i + 1), 16) : -1;
				int lo = (i + 2 < to) ? Character.digit(s.charAt(i + 2), 16) : -1;
				if (hi < 0 || lo < 0) {
					throw ApiException
						.badRequest("malformed percent-encoding in " + what + " at character " + (i - from));
				}
				out.write((hi << 4) | lo);
				i += 2;
			}
			else {
				out.write(c);
			}
		}
		return out.toByteArray();
	}

}
