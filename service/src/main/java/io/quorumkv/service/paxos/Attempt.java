package io.quorumkv.service.paxos;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;

/** One request's state across its rounds ({@link Proposer}). */
final class Attempt {

	final byte[] key;

	final byte @Nullable [] value;

	final long ttlSeconds;

	/** Null for a serial read. */
	final @Nullable Predicate<@Nullable Entry> condition;

	final long start;

	int rounds;

	/**
	 * The entries this request proposed that may have been accepted somewhere (each
	 * stamped with its own ballot's time, so no other request's entry equals one).
	 */
	final List<Entry> proposed = new ArrayList<>();

	/** How the last phase without a majority went, for the failure's message. */
	String lastTally = "";

	Attempt(byte[] key, byte @Nullable [] value, long ttlSeconds, @Nullable Predicate<@Nullable Entry> condition,
			long start) {
		this.key = key;
		this.value = value;
		this.ttlSeconds = ttlSeconds;
		this.condition = condition;
		this.start = start;
	}

}
