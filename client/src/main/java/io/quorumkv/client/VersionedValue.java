package io.quorumkv.client;

import java.util.Arrays;
import java.util.Objects;

/**
 * A value with its version, as a read answers it ({@code ETag}, {@code docs/api.md},
 * "Versions"): the timestamp the coordinator stamped on the write that won (hybrid
 * logical clock microseconds). Of two versions of one key the greater is the later write;
 * one version always means the same bytes. The value array is copied in and out; equality
 * is by content.
 *
 * @param value the value's exact bytes
 * @param version the winning write's timestamp, positive
 */
public record VersionedValue(byte[] value, long version) {

	public VersionedValue {
		value = Objects.requireNonNull(value, "value").clone();
		if (version <= 0) {
			throw new IllegalArgumentException("version must be positive, not " + version);
		}
	}

	@Override
	public byte[] value() {
		return this.value.clone();
	}

	/** The version as the node's {@code ETag} spells it: hexadecimal, quoted. */
	public String etag() {
		return "\"" + Long.toHexString(this.version) + "\"";
	}

	/**
	 * The version an {@code ETag} header names.
	 * @throws IllegalArgumentException unless it is a strong entity tag of 1 to 16
	 * hexadecimal digits naming a positive version
	 */
	static long parseEtag(String etag) {
		String tag = etag.strip();
		if (tag.length() < 3 || tag.length() > 18 || tag.charAt(0) != '"' || tag.charAt(tag.length() - 1) != '"') {
			throw new IllegalArgumentException("not a strong entity tag of a version: " + etag);
		}
		String hex = tag.substring(1, tag.length() - 1);
		for (int i = 0; i < hex.length(); i++) {
			if (Character.digit(hex.charAt(i), 16) < 0) {
				throw new IllegalArgumentException("not a strong entity tag of a version: " + etag);
			}
		}
		long version = Long.parseUnsignedLong(hex, 16);
		if (version <= 0) {
			throw new IllegalArgumentException("not a positive version: " + etag);
		}
		return version;
	}

	// A record compares arrays by identity; a read's answer is a value (STYLE rule 13's
	// exception for arrays, as KeyValue).
	@Override
	public boolean equals(Object other) {
		return other instanceof VersionedValue that && this.version == that.version
				&& Arrays.equals(this.value, that.value);
	}

	@Override
	public int hashCode() {
		return 31 * Long.hashCode(this.version) + Arrays.hashCode(this.value);
	}

	@Override
	public String toString() {
		return "VersionedValue[value=" + this.value.length + " bytes, version=" + etag() + "]";
	}

}
