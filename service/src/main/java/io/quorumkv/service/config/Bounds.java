package io.quorumkv.service.config;

import java.time.Duration;

/**
 * The checks the settings records make when bound: a bad value stops the start with a
 * message naming the property.
 */
public final class Bounds {

	private Bounds() {
	}

	/** Fails unless {@code value} is above zero. */
	public static void positive(Duration value, String property) {
		if (value.isNegative() || value.isZero()) {
			throw new IllegalArgumentException(property + " must be positive");
		}
	}

	/** Fails unless {@code value} is at least one. */
	public static void atLeastOne(long value, String property) {
		if (value < 1) {
			throw new IllegalArgumentException(property + " must be at least 1");
		}
	}

}
