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
 * wins.</li>
 * </ol>
 *
 * The order is total on versions, so keeping the greatest makes replicas converge
 * whatever order writes arrive in. It does not look at keys.
 */
public final class EntryOrder implements Comparator<Entry> {

	/** The order; {@code compare(a, b) > 0} means {@code a} wins over {@code b}. */
	public static final EntryOrder INSTANCE = new EntryOrder();

	private EntryOrder() {
	}

	@Override
	public int compare(Entry a, Entry b) {
		return compareVersions(a.timestamp(), a.value(), b.timestamp(), b.value());
	}

	/**
	 * The order on the parts of a version, for backends that hold them apart (a SQL row,
	 * a table cell).
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
