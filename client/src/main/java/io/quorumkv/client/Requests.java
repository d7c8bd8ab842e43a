package io.quorumkv.client;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * The paths and queries of the public API ({@code docs/api.md}): a key travels as its
 * UTF-8 bytes, percent-encoded once, every byte but RFC 3986's unreserved characters
 * escaped (so {@code +}, {@code &}, {@code %} and spaces arrive as they were).
 */
final class Requests {

	private static final char[] HEX = "0123456789ABCDEF".toCharArray();

	private Requests() {
	}

	/** The longest time to live the API accepts: ten years of 365 days. */
	static final Duration MAX_TTL = Duration.ofDays(10 * 365);

	static String entity(byte[] key, @Nullable Replicas replicas) {
		return entity(key, replicas, null);
	}

	/**
	 * The entity path, with the time to live of a write in seconds when {@code ttl} is
	 * given.
	 */
	/** A serial read of {@code key}: {@code consistency=serial}, no replicas. */
	static String serial(byte[] key) {
		return entity(key, null, null) + "&consistency=serial";
	}

	static String entity(byte[] key, @Nullable Replicas replicas, @Nullable Duration ttl) {
		StringBuilder path = new StringBuilder(16 + key.length * 3).append("/v0/entity?id=");
		appendEncoded(path, key);
		if (replicas != null) {
			path.append("&replicas=").append(replicas.queryValue());
		}
		if (ttl != null) {
			path.append("&ttl=").append(ttlSeconds(ttl));
		}
		return path.toString();
	}

	/**
	 * A time to live in whole seconds: at least one second and at most {@link #MAX_TTL},
	 * a fraction of a second refused rather than rounded.
	 */
	static long ttlSeconds(Duration ttl) {
		Objects.requireNonNull(ttl, "ttl");
		if (ttl.getNano() != 0 || ttl.getSeconds() < 1 || ttl.compareTo(MAX_TTL) > 0) {
			throw new IllegalArgumentException(
					"ttl must be whole seconds from 1 s to " + MAX_TTL.toDays() + " days: " + ttl);
		}
		return ttl.getSeconds();
	}

	/**
	 * One page of a range: from {@code from} (inclusive, or exclusive when it is the last
	 * key of the page before), to {@code end}, at most {@code limit} records.
	 */
	static String range(byte[] from, boolean inclusive, byte @Nullable [] end, int limit) {
		StringBuilder path = new StringBuilder(48).append(inclusive ? "/v0/entities?start=" : "/v0/entities?after=");
		appendEncoded(path, from);
		if (end != null) {
			path.append("&end=");
			appendEncoded(path, end);
		}
		return path.append("&limit=").append(limit).toString();
	}

	/**
	 * A key's UTF-8 bytes; a key that is empty, or that no UTF-8 can encode (a lone
	 * surrogate), is refused here rather than silently changed.
	 */
	static byte[] utf8(String name, String key) {
		Objects.requireNonNull(key, name);
		if (key.isEmpty()) {
			throw new IllegalArgumentException(name + " must not be empty");
		}
		try {
			ByteBuffer bytes = StandardCharsets.UTF_8.newEncoder()
				.onMalformedInput(CodingErrorAction.REPORT)
				.onUnmappableCharacter(CodingErrorAction.REPORT)
				.encode(CharBuffer.wrap(key));
			byte[] array = new byte[bytes.remaining()];
			bytes.get(array);
			return array;
		}
		catch (CharacterCodingException ex) {
			throw new IllegalArgumentException(name + " is not valid Unicode (a lone surrogate?)", ex);
		}
	}

	/**
	 * A key given as bytes, copied: it must not be empty; anything else is sent as it is
	 * (the nodes judge whether it is UTF-8).
	 */
	static byte[] key(byte[] key) {
		Objects.requireNonNull(key, "key");
		if (key.length == 0) {
			throw new IllegalArgumentException("key must not be empty");
		}
		return key.clone();
	}

	private static void appendEncoded(StringBuilder out, byte[] bytes) {
		for (byte b : bytes) {
			int c = b & 0xff;
			if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.'
					|| c == '_' || c == '~') {
				out.append((char) c);
			}
			else {
				out.append('%').append(HEX[c >>> 4]).append(HEX[c & 0xf]);
			}
		}
	}

}
