package io.quorumkv.service.paxos;

import java.util.Objects;
import java.util.function.Predicate;

import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Conditional writes and serial reads of one key, linearizable among themselves: each is
 * decided by a round of single-decree Paxos among the key's replicas (a majority of its
 * owners, and of its new owners too while it moves), after Cassandra's lightweight
 * transactions. What is chosen is written as an ordinary versioned entry, stamped with
 * the time of the ballot it was first proposed under, above every version that round saw,
 * so plain reads, read repair, hints, repair and streaming carry it like any other write,
 * and the version of an applied write is the one stored.
 *
 * <pre>{@code
 * paxos.write(key, value, 0, (current) -> current == null) // create only
 *     .map((outcome) -> switch (outcome) {
 *         case Paxos.Outcome.Applied applied -> 201;
 *         case Paxos.Outcome.Failed failed -> 412;
 *         case Paxos.Outcome.Read read -> throw new IllegalStateException();
 *     });
 * }</pre>
 *
 * A request that does not settle before its deadline (contention, unreachable replicas)
 * fails with {@link Unresolved}; it is never answered wrongly.
 */
public final class Paxos {

	private final Proposer proposer;

	Paxos(Proposer proposer) {
		this.proposer = proposer;
	}

	/**
	 * Writes {@code value} (a tombstone when null), expiring {@code ttlSeconds} after its
	 * timestamp when positive, if {@code condition} holds for the key's current live
	 * entry (null when absent, deleted or expired).
	 * @return {@link Outcome.Applied} with the written entry, or {@link Outcome.Failed}
	 * with the entry the condition failed on
	 */
	public Mono<Outcome> write(byte[] key, byte @Nullable [] value, long ttlSeconds,
			Predicate<@Nullable Entry> condition) {
		Objects.requireNonNull(key, "key");
		Objects.requireNonNull(condition, "condition");
		return this.proposer.write(key, value, ttlSeconds, condition);
	}

	/**
	 * The key's live entry, read after completing any conditional write in progress
	 * (Cassandra's SERIAL read); empty when absent, deleted or expired.
	 */
	public Mono<Entry> read(byte[] key) {
		Objects.requireNonNull(key, "key");
		return this.proposer.read(key).mapNotNull((outcome) -> switch (outcome) {
			case Outcome.Read read -> read.current();
			case Outcome.Applied applied -> applied.entry();
			case Outcome.Failed failed -> failed.current();
		});
	}

	/** What a conditional write or a serial read came to. */
	public sealed interface Outcome {

		/** The condition held; {@code entry} is written at a majority. */
		record Applied(Entry entry) implements Outcome {
		}

		/**
		 * The condition failed on {@code current} (null: absent); nothing was written.
		 */
		record Failed(@Nullable Entry current) implements Outcome {
		}

		/** A serial read's answer (null: absent). */
		record Read(@Nullable Entry current) implements Outcome {
		}

	}

	/**
	 * No decision before the deadline, or a decision whose outcome this coordinator
	 * cannot tell: the client should read (serially) before it tries again.
	 */
	public static final class Unresolved extends RuntimeException {

		private final boolean maybeApplied;

		Unresolved(String message, boolean maybeApplied) {
			super(message, null, false, false);
			this.maybeApplied = maybeApplied;
		}

		/** Whether the write may have been applied (it was proposed, perhaps chosen). */
		public boolean maybeApplied() {
			return this.maybeApplied;
		}

	}

}
