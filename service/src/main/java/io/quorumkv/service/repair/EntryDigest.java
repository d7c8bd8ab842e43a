package io.quorumkv.service.repair;

import java.util.Arrays;

import com.dynatrace.hash4j.hashing.HashStream128;
import com.dynatrace.hash4j.hashing.HashValue128;
import com.dynatrace.hash4j.hashing.Hasher128;
import com.dynatrace.hash4j.hashing.Hashing;
import io.quorumkv.storage.Entry;

/**
 * One kept version, without its value: the key, the timestamp, whether it is a tombstone,
 * XXH3-128 of the value (zero for a tombstone) and the value's expiry. What replicas
 * exchange to find which keys differ; two digests of one key are the same version when
 * all their parts are equal (a 128-bit collision of two values aside), so a copy that
 * lost its expiry, or holds another one, differs and is repaired (the earlier expiry
 * wins, {@code EntryOrder}). The expiry enters the tree hash only when the value expires,
 * so the hashes of other versions are those of nodes without expiry.
 *
 * @param key the key
 * @param timestamp the version's timestamp
 * @param tombstone whether the version is a tombstone
 * @param valueHigh the value hash's high 64 bits
 * @param valueLow the value hash's low 64 bits
 * @param expiresAt the value's expiry ({@link Entry#NO_EXPIRY} for none and for a
 * tombstone)
 */
record EntryDigest(byte[] key, long timestamp, boolean tombstone, long valueHigh, long valueLow, long expiresAt) {

	private static final Hasher128 XXH3 = Hashing.xxh3_128();

	static EntryDigest of(Entry entry) {
		byte[] value = entry.value();
		if (value == null) {
			return new EntryDigest(entry.key(), entry.timestamp(), true, 0, 0, Entry.NO_EXPIRY);
		}
		HashValue128 hash = XXH3.hashBytesTo128Bits(value);
		return new EntryDigest(entry.key(), entry.timestamp(), false, hash.getMostSignificantBits(),
				hash.getLeastSignificantBits(), entry.expiresAt());
	}

	/** Whether the version is a value that expires. */
	boolean expires() {
		return this.expiresAt != Entry.NO_EXPIRY;
	}

	/** The version's contribution to a tree node: a hash of every part, key included. */
	HashValue128 versionHash() {
		HashStream128 stream = XXH3.hashStream();
		stream.putByteArray(this.key).putLong(this.timestamp).putBoolean(this.tombstone);
		stream.putLong(this.valueHigh).putLong(this.valueLow);
		if (expires()) {
			stream.putLong(this.expiresAt);
		}
		return stream.get();
	}

	boolean sameVersion(EntryDigest other) {
		return this.timestamp == other.timestamp && this.tombstone == other.tombstone
				&& this.valueHigh == other.valueHigh && this.valueLow == other.valueLow
				&& this.expiresAt == other.expiresAt;
	}

	/**
	 * Whether {@code other} may win over this version by the last-write-wins order: a
	 * greater timestamp, a tombstone over a value at the same one, or a different value
	 * at the same one (only the bytes can tell), or the same value with another expiry.
	 */
	boolean mayLoseTo(EntryDigest other) {
		if (other.timestamp != this.timestamp) {
			return other.timestamp > this.timestamp;
		}
		if (other.tombstone != this.tombstone) {
			return other.tombstone;
		}
		return !this.tombstone && !sameVersion(other);
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof EntryDigest that && Arrays.equals(this.key, that.key) && sameVersion(that);
	}

	@Override
	public int hashCode() {
		return 31 * Arrays.hashCode(this.key) + Long.hashCode(this.timestamp ^ this.valueLow);
	}

}
