package io.quorumkv.service.http;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * The query string of a request, percent-decoded once and strictly.
 *
 * <p>
 * RFC 3986 rules: {@code %XX} is a byte, a printable ASCII character is itself ({@code +}
 * is a plus, not a space), and any other raw byte is a 400 (percent-encode it). A
 * malformed escape, a parameter given twice, or a decoded value that is not UTF-8 is a
 * 400 naming the parameter. A public route parses with
 * {@link #parse(String, int, String)} and the set of parameters it reads: any other
 * parameter, known to the API or not, is a 400 naming it, so that a typo ({@code tll=})
 * never changes what a request means without a word. The internal routes parse with
 * {@link #parse(String)}, which keeps every name.
 */
final class QueryParameters {

	/** The parameters the API reads, matched without building a name per request. */
	private static final String[] NAMES = { "id", "replicas", "ack", "from", "start", "end", "after", "limit", "ttl",
			"consistency" };

	/** GET, HEAD and DELETE of one key: {@code id} and the replicas. */
	static final int KEY = 0b1111;

	/** GET and HEAD of one key: {@code id}, the replicas and {@code consistency}. */
	static final int KEY_READ = KEY | 1 << 9;

	/** PUT of one key: {@code id}, the replicas and {@code ttl}. */
	static final int KEY_WRITE = KEY | 1 << 8;

	/** GET of a range: the bounds, {@code limit} and the replicas. */
	static final int RANGE = 0b1110 | 0b1111 << 4;

	/** A route that reads no parameter. */
	static final int NONE = 0;

	/** Every parameter the API knows, one slot per name in {@link #NAMES}. */
	private final byte[] @Nullable [] known;

	/** The other parameters, kept only by the lenient {@link #parse(String)}. */
	private final @Nullable Map<String, byte[]> others;

	private QueryParameters(byte[] @Nullable [] known, @Nullable Map<String, byte[]> others) {
		this.known = known;
		this.others = others;
	}

	/** Parses a query and keeps every parameter, known or not (the internal routes). */
	static QueryParameters parse(@Nullable String rawQuery) {
		return parse(rawQuery, -1, null);
	}

	/**
	 * Parses the query of a public route that reads the parameters of {@code allowed} (a
	 * mask over {@link #NAMES}: {@link #KEY}, {@link #KEY_WRITE}, {@link #RANGE},
	 * {@link #NONE}); any other parameter is a 400 naming it and {@code route}.
	 */
	static QueryParameters parse(@Nullable String rawQuery, int allowed, @Nullable String route) {
		byte[] @Nullable [] known = new byte[NAMES.length][];
		Map<String, byte[]> others = (route == null) ? new HashMap<>(4) : null;
		if (rawQuery == null || rawQuery.isEmpty()) {
			return new QueryParameters(known, others);
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
				int nameEnd = hasValue ? eq : end;
				int index = index(rawQuery, start, nameEnd);
				String name = (index >= 0) ? NAMES[index]
						: new String(decode(rawQuery, start, nameEnd, "parameter name"), StandardCharsets.UTF_8);
				if (index < 0 && others == null) {
					throw ApiException.badRequest("unknown parameter '" + printable(name) + "' for " + route);
				}
				if (index >= 0 && (allowed & (1 << index)) == 0) {
					throw ApiException.badRequest("parameter '" + name + "' does not apply to " + route);
				}
				byte[] value = hasValue ? decode(rawQuery, eq + 1, end, name) : new byte[0];
				boolean twice;
				if (index >= 0) {
					twice = known[index] != null;
					known[index] = value;
				}
				else {
					twice = others.putIfAbsent(name, value) != null;
				}
				if (twice) {
					throw ApiException.badRequest("parameter '" + printable(name) + "' is given more than once");
				}
			}
			start = end + 1;
		}
		return new QueryParameters(known, others);
	}

	/**
	 * Checks that only parameters named in {@code allowed} were given: any other, known
	 * to the public API or not, is a 400 naming it and {@code route}. How the internal
	 * routes, which parse with {@link #parse(String)}, are as strict as the public ones.
	 */
	void allowOnly(Set<String> allowed, String route) {
		for (int i = 0; i < NAMES.length; i++) {
			if (this.known[i] != null && !allowed.contains(NAMES[i])) {
				throw ApiException.badRequest("unknown parameter '" + NAMES[i] + "' for " + route);
			}
		}
		if (this.others != null) {
			for (String name : this.others.keySet()) {
				if (!allowed.contains(name)) {
					throw ApiException.badRequest("unknown parameter '" + printable(name) + "' for " + route);
				}
			}
		}
	}

	/** A parameter's name as a message may show it: no control characters, cut short. */
	static String printable(String text) {
		String cut = (text.length() > 32) ? text.substring(0, 32) + "..." : text;
		return cut.replaceAll("\\p{Cntrl}", "?");
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
		for (int i = 0; i < NAMES.length; i++) {
			if (NAMES[i].equals(name)) {
				return this.known[i];
			}
		}
		return (this.others != null) ? this.others.get(name) : null;
	}

	/** Whether the parameter was given, even empty. */
	boolean has(String name) {
		return bytes(name) != null;
	}

	/** The decoded parameter as UTF-8 text, or null when absent. */
	@Nullable String text(String name) {
		byte[] raw = bytes(name);
		if (raw == null) {
			return null;
		}
		return isAscii(raw) ? new String(raw, StandardCharsets.ISO_8859_1) : utf8(raw, name);
	}

	/** A required, non-empty key parameter, checked for UTF-8 and size. */
	byte[] key(String name, int maxKeySize) {
		byte[] raw = bytes(name);
		if (raw == null || raw.length == 0) {
			throw ApiException.badRequest("parameter '" + name + "' is required and must not be empty");
		}
		checkKey(raw, name, maxKeySize);
		return raw;
	}

	/** An optional key parameter; absent or empty means unbounded. */
	byte @Nullable [] optionalKey(String name, int maxKeySize) {
		byte[] raw = bytes(name);
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

	/**
	 * The index in {@link #NAMES} of the parameter name at {@code [from, to)} when it is
	 * spelt plainly; otherwise the decoded name is looked up (once per odd spelling).
	 */
	private static int index(String query, int from, int to) {
		for (int i = 0; i < NAMES.length; i++) {
			if (NAMES[i].length() == to - from && query.startsWith(NAMES[i], from)) {
				return i;
			}
		}
		if (query.indexOf('%', from) < 0 || query.indexOf('%', from) >= to) {
			return -1;
		}
		String decoded = new String(decode(query, from, to, "parameter name"), StandardCharsets.UTF_8);
		for (int i = 0; i < NAMES.length; i++) {
			if (NAMES[i].equals(decoded)) {
				return i;
			}
		}
		return -1;
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
		// The server hands the request line over one char per byte (ISO-8859-1). A raw
		// byte outside printable ASCII is refused whatever it is: Spring refuses the
		// request target before us for most of them (control bytes, and the bytes 0x80 to
		// 0x9F and 0xA0 that raw UTF-8 is full of), so taking the others would make raw
		// UTF-8 work for some keys and not for others. Percent-encoded, every byte works.
		int percent = s.indexOf('%', from);
		if (percent < 0 || percent >= to) {
			byte[] bytes = new byte[to - from];
			for (int i = from; i < to; i++) {
				bytes[i - from] = plain(s.charAt(i), i - from, what);
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
				out.write(plain(c, i - from, what));
			}
		}
		return out.toByteArray();
	}

	/** A byte written as itself: printable ASCII only. */
	private static byte plain(char c, int at, String what) {
		if (c <= ' ' || c >= 0x7F) {
			throw ApiException.badRequest("raw byte 0x" + Integer.toHexString(c & 0xFF) + " in " + what
					+ " at character " + at + ": percent-encode it (%" + HEX[(c >> 4) & 0xF] + HEX[c & 0xF] + ")");
		}
		return (byte) c;
	}

	private static final char[] HEX = "0123456789ABCDEF".toCharArray();

}
