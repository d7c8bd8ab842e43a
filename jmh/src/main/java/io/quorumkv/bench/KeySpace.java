package io.quorumkv.bench;

import java.util.SplittableRandom;

import io.quorumkv.storage.Entry;

/**
 * The benchmark's keys and values: {@code keys} present keys of 16 bytes and values of
 * 100 bytes.
 *
 * <p>
 * Key {@code i} is {@code "k"}, {@code i} in 14 zero-padded decimal digits, then a suffix
 * byte: {@code '0'} for the present key, {@code '5'} for its absent twin. An absent key
 * therefore sorts between two present ones, inside every table's key range, so only a
 * bloom filter or an index lookup can reject it; nothing is skipped by min/max-key
 * pruning.
 */
final class KeySpace {

	static final int KEY_SIZE = 16;

	static final int VALUE_SIZE = 100;

	/** Distinct random values to pick from; spares the measured code a random fill. */
	private static final int VALUE_POOL = 4096;

	private static final int DIGITS = 14;

	private final int keys;

	private final byte[][] values;

	KeySpace(int keys) {
		if (keys < 1 || keys > 100_000_000) {
			throw new IllegalArgumentException("keys must be 1..100,000,000: " + keys);
		}
		this.keys = keys;
		SplittableRandom random = new SplittableRandom(42);
		this.values = new byte[VALUE_POOL][VALUE_SIZE];
		for (byte[] value : this.values) {
			random.nextBytes(value);
		}
	}

	int keys() {
		return this.keys;
	}

	/** The key written for index {@code i}. */
	byte[] present(int i) {
		return key(i, (byte) '0');
	}

	/** A key inside the key range that is never written. */
	byte[] absent(int i) {
		return key(i, (byte) '5');
	}

	/** One of the pooled random values; callers must not modify it. */
	byte[] value(int pick) {
		return this.values[Math.floorMod(pick, VALUE_POOL)];
	}

	/** The entry the prefill writes for index {@code i}. */
	Entry prefillEntry(int i, long timestamp) {
		return Entry.value(present(i), value(i), timestamp);
	}

	private byte[] key(int i, byte suffix) {
		if (i < 0 || i >= this.keys) {
			throw new IndexOutOfBoundsException(i);
		}
		byte[] key = new byte[KEY_SIZE];
		key[0] = 'k';
		int n = i;
		for (int pos = DIGITS; pos >= 1; pos--) {
			key[pos] = (byte) ('0' + (n % 10));
			n /= 10;
		}
		key[KEY_SIZE - 1] = suffix;
		return key;
	}

}
