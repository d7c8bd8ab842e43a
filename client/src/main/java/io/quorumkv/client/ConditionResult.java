package io.quorumkv.client;

import java.util.Objects;
import java.util.OptionalLong;

/**
 * The answer to a conditional write ({@code putIf}, {@code putIfAbsent},
 * {@code deleteIf}): whether its condition held, and a version.
 *
 * <ul>
 * <li>{@code held()}: the write was applied (201 to a {@code PUT}, 202 to a
 * {@code DELETE}); {@code version()} is the version it created when the node named it in
 * an {@code ETag}.</li>
 * <li>not {@code held()}: the key was not at the version the condition named (412
 * Precondition Failed) and nothing was written; {@code version()} is the key's current
 * version, empty when the key is absent.</li>
 * </ul>
 *
 * @param held whether the condition held and the write was applied
 * @param version the version created (held) or found (not held), when known
 */
public record ConditionResult(boolean held, OptionalLong version) {

	public ConditionResult {
		Objects.requireNonNull(version, "version");
	}

}
