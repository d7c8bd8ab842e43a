package io.quorumkv.storage;

import java.util.Arrays;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * One version of one key: a value, or a tombstone when {@code value} is {@code null}.
 *
 * <p>
 * The constructor copies both arrays, so a caller may reuse its buffers. The accessors
 * return the entry's own arrays without copying (values can be 1 MiB and are read on
 * every request): callers must treat them as read-only.
 *
 * <pre>{@code
 * Entry put = Entry.value(key, bytes, clock.now());
 * Entry delete = Entry.tombstone(key, clock.now());
 * Entry winner = EntryOrder.max(put, delete);
 * }</pre>
 *
 * @param key the key bytes, never empty
 * @param value the value bytes (possibly empty), or {@code null} for a tombstone
 * @param timestamp the coordinator's hybrid-logical-clock stamp in microseconds
 */
public record Entry(byte[] key, byte @Nullable [] value, long timestamp) {

	public Entry {
		Objects.requireNonNull(key, "key");
		if (key.length == 0) {
			throw new IllegalArgumentException("key must not be empty");
		}
		key = key.clone();
		value = (value != null) ? value.clone() : null;
	}

	/** A value entry. */
	public static Entry value(byte[] key, byte[] value, long timestamp) {
		return new Entry(key, Objects.requireNonNull(value, "value"), timestamp);
	}

	/** A tombstone: the key was deleted at {@code timestamp}. */
	public static Entry tombstone(byte[] key, long timestamp) {
		return new Entry(key, null, timestamp);
	}

	public boolean isTombstone() {
		return this.value == null;
	}

	/** Bytes this entry occupies as data (key + value + timestamp), for accounting. */
	public long sizeInBytes() {
		return this.key.length + ((this.value != null) ? this.value.length : 0) + Long.BYTES;
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof Entry that && this.timestamp == that.timestamp && Arrays.equals(this.key, that.key)
				&& Arrays.equals(this.value, that.value);
	}

	@Override
	public int hashCode() {
		return 31 * (31 * Arrays.hashCode(this.key) + Arrays.hashCode(this.value)) + Long.hashCode(this.timestamp);
	}

	@Override
	public String toString() {
		return "Entry[key=" + Keys.toDisplayString(this.key) + ", "
				+ ((this.value != null) ? "value=" + this.value.length + " bytes" : "tombstone") + ", timestamp="
				+ this.timestamp + "]";
	}

}
