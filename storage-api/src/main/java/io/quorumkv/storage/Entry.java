package io.quorumkv.storage;

import java.util.Arrays;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * One version of one key: a value, or a tombstone when {@code value} is {@code null}; a
 * value may expire ({@code expiresAt}, see {@link Expiry}).
 *
 * <p>
 * The constructors and the factories {@link #value}, {@link #expiring} and
 * {@link #tombstone} copy both arrays, so a caller may reuse its buffers. {@link #wrap}
 * takes the arrays as they are, for a caller that has just made them and gives them up (a
 * decoder: the key and value it read from a frame, a block or a memtable slot); it saves
 * a copy of every value read or received, which is up to 1 MiB. The accessors return the
 * entry's own arrays without copying (values can be 1 MiB and are read on every request):
 * callers must treat them as read-only.
 *
 * <pre>{@code
 * Entry put = Entry.value(key, bytes, clock.now());
 * Entry delete = Entry.tombstone(key, clock.now());
 * Entry lease = Entry.expiring(key, bytes, ts, Expiry.after(ts, 60));
 * Entry winner = EntryOrder.max(put, delete);
 * }</pre>
 *
 * <p>
 * Expiry: an expiring value is a value until {@code expiresAt}; from then on it is the
 * tombstone it turned into, {@code Entry.tombstone(key, timestamp)} ({@link #asSeenAt}):
 * it reads as absent and still shadows every older version of its key. The expiry rides
 * with its write and takes no part in which write wins, except between two writes with
 * equal timestamps and equal values ({@link EntryOrder}).
 *
 * <p>
 * A final class rather than a record: a record's every constructor copies as its
 * canonical one does, and {@link #wrap} must not. It keeps a record's accessors, equality
 * (by content) and immutability.
 */
public final class Entry {

	/** The expiry of an entry that never expires: {@link Expiry#NEVER}. */
	public static final long NO_EXPIRY = Expiry.NEVER;

	private final byte[] key;

	private final byte @Nullable [] value;

	private final long timestamp;

	private final long expiresAt;

	/**
	 * An entry of copies of {@code key} and {@code value}.
	 * @param key the key bytes, never empty
	 * @param value the value bytes (possibly empty), or {@code null} for a tombstone
	 * @param timestamp the coordinator's hybrid-logical-clock stamp in microseconds
	 * @param expiresAt when the value expires, in microseconds on the timestamps' scale;
	 * {@link Expiry#NEVER} for a value that does not expire and for every tombstone
	 */
	public Entry(byte[] key, byte @Nullable [] value, long timestamp, long expiresAt) {
		this(checked(key, value, expiresAt).clone(), (value != null) ? value.clone() : null, timestamp, expiresAt,
				true);
	}

	private Entry(byte[] key, byte @Nullable [] value, long timestamp, long expiresAt, boolean alreadyChecked) {
		this.key = alreadyChecked ? key : checked(key, value, expiresAt);
		this.value = value;
		this.timestamp = timestamp;
		this.expiresAt = expiresAt;
	}

	private static byte[] checked(byte[] key, byte @Nullable [] value, long expiresAt) {
		Objects.requireNonNull(key, "key");
		if (key.length == 0) {
			throw new IllegalArgumentException("key must not be empty");
		}
		if (value == null && expiresAt != NO_EXPIRY) {
			throw new IllegalArgumentException("a tombstone does not expire");
		}
		return key;
	}

	/**
	 * An entry of {@code key} and {@code value} themselves, not copies: the caller gives
	 * both arrays up and never changes them again. For decoders that have just made them;
	 * everyone else uses the constructors or the other factories, which copy. Checked as
	 * the constructor checks.
	 */
	public static Entry wrap(byte[] key, byte @Nullable [] value, long timestamp, long expiresAt) {
		return new Entry(key, value, timestamp, expiresAt, false);
	}

	/**
	 * An entry that does not expire: a value, or a tombstone when {@code value} is null.
	 */
	public Entry(byte[] key, byte @Nullable [] value, long timestamp) {
		this(key, value, timestamp, NO_EXPIRY);
	}

	/** A value entry. */
	public static Entry value(byte[] key, byte[] value, long timestamp) {
		return new Entry(key, Objects.requireNonNull(value, "value"), timestamp);
	}

	/**
	 * A value that expires at {@code expiresAt} (microseconds, {@link Expiry}); with
	 * {@link #NO_EXPIRY} it never does.
	 */
	public static Entry expiring(byte[] key, byte[] value, long timestamp, long expiresAt) {
		return new Entry(key, Objects.requireNonNull(value, "value"), timestamp, expiresAt);
	}

	/** A tombstone: the key was deleted at {@code timestamp}. */
	public static Entry tombstone(byte[] key, long timestamp) {
		return new Entry(key, null, timestamp);
	}

	/** The key bytes, never empty; the entry's own array, read-only. */
	public byte[] key() {
		return this.key;
	}

	/**
	 * The value bytes (possibly empty), or {@code null} for a tombstone; the entry's own
	 * array, read-only.
	 */
	public byte @Nullable [] value() {
		return this.value;
	}

	/** The coordinator's hybrid-logical-clock stamp, in microseconds. */
	public long timestamp() {
		return this.timestamp;
	}

	/**
	 * When the value expires, in microseconds on the timestamps' scale;
	 * {@link Expiry#NEVER} for a value that does not expire and for every tombstone.
	 */
	public long expiresAt() {
		return this.expiresAt;
	}

	public boolean isTombstone() {
		return this.value == null;
	}

	/** Whether this is a value with an expiry. */
	public boolean expires() {
		return this.expiresAt != NO_EXPIRY;
	}

	/** Whether this is a value that has expired at {@code nowMicros}. */
	public boolean isExpiredAt(long nowMicros) {
		return this.expiresAt != NO_EXPIRY && this.expiresAt <= nowMicros;
	}

	/**
	 * This entry as a reader sees it at {@code nowMicros}: itself, or once expired the
	 * tombstone it turned into (same key and timestamp). The tombstone is greater than
	 * the expired value by {@link EntryOrder}, so turning one into the other can only
	 * make a replica's kept version greater.
	 */
	public Entry asSeenAt(long nowMicros) {
		return isExpiredAt(nowMicros) ? new Entry(this.key, null, this.timestamp, NO_EXPIRY, true) : this;
	}

	/**
	 * Bytes this entry occupies as data (key + value + timestamp, + expiry when it
	 * expires), for accounting.
	 */
	public long sizeInBytes() {
		return this.key.length + ((this.value != null) ? this.value.length : 0) + Long.BYTES
				+ (expires() ? Long.BYTES : 0);
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof Entry that && this.timestamp == that.timestamp && this.expiresAt == that.expiresAt
				&& Arrays.equals(this.key, that.key) && Arrays.equals(this.value, that.value);
	}

	@Override
	public int hashCode() {
		return 31
				* (31 * (31 * Arrays.hashCode(this.key) + Arrays.hashCode(this.value)) + Long.hashCode(this.timestamp))
				+ Long.hashCode(this.expiresAt);
	}

	@Override
	public String toString() {
		return "Entry[key=" + Keys.toDisplayString(this.key) + ", "
				+ ((this.value != null) ? "value=" + this.value.length + " bytes" : "tombstone") + ", timestamp="
				+ this.timestamp + (expires() ? ", expiresAt=" + this.expiresAt : "") + "]";
	}

}
