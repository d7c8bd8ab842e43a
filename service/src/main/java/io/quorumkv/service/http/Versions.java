package io.quorumkv.service.http;

import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;

/**
 * The version of a stored value as the API shows it: the write's timestamp (the
 * coordinator's hybrid logical clock, microseconds) in hexadecimal. As an {@code ETag} it
 * is quoted and strong: two reads answer the same {@code ETag} only for the same write,
 * whose bytes never change.
 */
final class Versions {

	private Versions() {
	}

	/** The version of {@code entry}, unquoted. */
	static String version(Entry entry) {
		return Long.toHexString(entry.timestamp());
	}

	/** The version of {@code entry} as an {@code ETag} header value. */
	static String etag(Entry entry) {
		return "\"" + version(entry) + "\"";
	}

	/**
	 * Whether an {@code If-None-Match} header names {@code etag}: {@code *}, or a
	 * comma-separated list holding it (weak forms compared by their tag, as RFC 9110's
	 * weak comparison does for {@code If-None-Match}).
	 */
	static boolean matches(@Nullable String ifNoneMatch, String etag) {
		if (ifNoneMatch == null) {
			return false;
		}
		for (String candidate : ifNoneMatch.split(",")) {
			String tag = candidate.strip();
			if (tag.startsWith("W/")) {
				tag = tag.substring(2);
			}
			if (tag.equals("*") || tag.equals(etag)) {
				return true;
			}
		}
		return false;
	}

}
