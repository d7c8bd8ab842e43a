package io.quorumkv.storage;

import java.util.Arrays;
import java.util.Comparator;

import org.jspecify.annotations.Nullable;

/**
 * The last-write-wins order of two versions of the same key; the one rule every backend,
 * the coordinator's read merge and read repair apply.
 *
 * <ol>
 * <li>the greater timestamp wins;</li>
 * <li>on equal timestamps a tombstone beats a value;</li>
 * <li>between two values with equal timestamps the greater value in unsigned byte order
 * wins;</li>
 * <li>between two equal values with equal timestamps (only writes stamped alike by two
 * coordinators) the one that expires first wins, a value that never expires last.</li>
 * </ol>
 *
 * The order is total on versions, so keeping the greatest makes replicas converge
 * whatever order writes arrive in. It does not look at keys. The expiry takes part only
 * in the last rule: it rides with its write (an expiring write replaces a value that does
 * not expire when it is newer, and the other way round). An expired value reads as the
 * tombstone of its timestamp ({@link Entry#asSeenAt}), which rule 2 ranks above it.
 */
public final class EntryOrder implements Comparator<Entry> {

	/** The order; {@code compare(a, b) > 0} means {@code a} wins over {@code b}. */
	public static final EntryOrder INSTANCE = new EntryOrder();

	private EntryOrder() {
	}

	@Override
	public int compare(Entry a, Entry b) {
		return compareVersions(a.timestamp(), a.value(), a.expiresAt(), b.timestamp(), b.value(), b.expiresAt());
	}

	/**
	 * The order on the parts of a version, for backends that hold them apart (a SQL row,
	 * a table cell); expiries are {@link Expiry#NEVER} for values that do not expire and
	 * for tombstones.
	 */
	public static int compareVersions(long timestampA, byte @Nullable [] valueA, long expiresAtA, long timestampB,
			byte @Nullable [] valueB, long expiresAtB) {
		int byValue = compareVersions(timestampA, valueA, timestampB, valueB);
		// The earlier expiry wins: the reverse of the expiries' numeric order.
		return (byValue != 0) ? byValue : Long.compare(expiresAtB, expiresAtA);
	}

	/**
	 * The order on the parts of two versions that do not expire (rules 1 to 3 only).
	 */
	public static int compareVersions(long timestampA, byte @Nullable [] valueA, long timestampB,
			byte @Nullable [] valueB) {
		int byTime = Long.compare(timestampA, timestampB);
		if (byTime != 0) {
			return byTime;
		}
		if (valueA == null || valueB == null) {
			// A tombstone beats a value; two tombstones are equal.
			return Boolean.compare(valueA == null, valueB == null);
		}
		return Arrays.compareUnsigned(valueA, valueB);
	}

	/** The winner of two versions; {@code a} when they are equal. Either may be null. */
	public static @Nullable Entry max(@Nullable Entry a, @Nullable Entry b) {
		if (a == null) {
			return b;
		}
		if (b == null) {
			return a;
		}
		return (INSTANCE.compare(a, b) >= 0) ? a : b;
	}

	/** Whether {@code candidate} would replace {@code current} (is strictly greater). */
	public static boolean supersedes(Entry candidate, @Nullable Entry current) {
		return current == null || INSTANCE.compare(candidate, current) > 0;
	}

}
