package io.quorumkv.ycsb;

import java.util.Locale;

import org.jspecify.annotations.Nullable;

/** The boolean properties of our bindings, read one way by all of them. */
public final class Flags {

	private Flags() {
	}

	/**
	 * A property that is {@code true} or {@code false} (any case, blanks around it
	 * ignored), false when absent or blank.
	 * @throws IllegalArgumentException naming {@code name} for anything else
	 */
	public static boolean parse(@Nullable String value, String name) {
		if (value == null || value.isBlank()) {
			return false;
		}
		return switch (value.strip().toLowerCase(Locale.ROOT)) {
			case "true" -> true;
			case "false" -> false;
			default -> throw new IllegalArgumentException(name + " must be true or false, not " + value);
		};
	}

}
