package io.quorumkv.service.nemesis;

import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * The sequential specification {@link LinearizabilityChecker} checks histories against:
 * one key's register holding a value with its version (the {@code ETag}), read, written,
 * deleted and compared-and-set on its version.
 *
 * <p>
 * Versions are the store's: a write creates one the model cannot predict, so a write
 * states the version it created when the client learnt it, or {@link #UNKNOWN}. A state
 * whose version is unknown is refined by the first operation that reveals it (a read, a
 * conditional write that held on it, a 412 naming it): that refinement is part of the
 * state, so the search stays a function of (operations placed, state). An operation whose
 * outcome is unknown (timed out) has two successors: it took effect, or it never did
 * (which for a failed condition is the same state).
 */
final class RegisterModel {

	/** A version not known to the client. */
	static final long UNKNOWN = -1;

	/** The version of an absent key (no {@code ETag}). */
	static final long ABSENT = 0;

	private RegisterModel() {
	}

	/**
	 * One state: the value and its version; absent is a null value with version
	 * {@link #ABSENT}.
	 */
	record State(@Nullable String value, long version) {

		static final State EMPTY = new State(null, ABSENT);

		State {
			if ((value == null) != (version == ABSENT)) {
				throw new IllegalArgumentException("absent exactly when the version is 0: " + value + " " + version);
			}
			if (version < UNKNOWN) {
				throw new IllegalArgumentException("bad version " + version);
			}
		}

		boolean present() {
			return this.value != null;
		}

		/** Whether the version is {@code expected}, learning it if unknown; else null. */
		@Nullable State withVersion(long expected) {
			if (this.version == expected) {
				return this;
			}
			return (this.version == UNKNOWN && this.present() && expected > ABSENT) ? new State(this.value, expected)
					: null;
		}

		/** Whether the version may differ from {@code expected}. */
		boolean mayDiffer(long expected) {
			return this.version != expected || this.version == UNKNOWN;
		}

		@Override
		public String toString() {
			return present() ? this.value + "@" + ((this.version == UNKNOWN) ? "?" : this.version) : "absent";
		}

	}

	/** What an operation asked. */
	sealed interface Input {

	}

	/** A read of the key ({@code GET}, serial when it must see conditional writes). */
	record Read() implements Input {

	}

	/**
	 * An unconditional {@code PUT} that created {@code version} (or {@link #UNKNOWN}).
	 */
	record Write(String value, long version) implements Input {

	}

	/** An unconditional {@code DELETE}. */
	record Delete() implements Input {

	}

	/**
	 * {@code PUT} with {@code If-Match: expected}, creating {@code version} if it held.
	 */
	record PutIfVersion(String value, long expected, long version) implements Input {

		PutIfVersion {
			requirePositive(expected);
		}

	}

	/** {@code PUT} with {@code If-None-Match: *}, creating {@code version} if it held. */
	record PutIfAbsent(String value, long version) implements Input {

	}

	/** {@code DELETE} with {@code If-Match: expected}. */
	record DeleteIfVersion(long expected) implements Input {

		DeleteIfVersion {
			requirePositive(expected);
		}

	}

	/** What an operation answered; null in a history when no answer came. */
	sealed interface Output {

	}

	/**
	 * A read's answer: the value and version (an absent key: null and {@link #ABSENT}; a
	 * version not reported: {@link #UNKNOWN}).
	 */
	record Observed(@Nullable String value, long version) implements Output {

	}

	/** An unconditional write acknowledged (201, 202). */
	record Done() implements Output {

	}

	/**
	 * A conditional write's answer: {@code held} (201, 202) or not (412, with the current
	 * version: {@link #ABSENT} when there was no {@code ETag}, {@link #UNKNOWN} when not
	 * recorded).
	 */
	record Condition(boolean held, long current) implements Output {

	}

	/**
	 * The states {@code state} may become by the operation with this answer (none: it
	 * cannot answer so from that state; an unknown answer: any it could have).
	 */
	static List<State> step(State state, Input input, @Nullable Output output) {
		if (output == null) {
			// no answer: it took effect with whatever answer it could give, or never did
			return switch (input) {
				case Read read -> List.of(state);
				case Write write -> distinct(state, new State(write.value(), write.version()));
				case Delete delete -> distinct(state, State.EMPTY);
				case PutIfVersion put -> {
					State held = state.withVersion(put.expected());
					yield (held != null) ? distinct(state, new State(put.value(), put.version())) : List.of(state);
				}
				case PutIfAbsent put ->
					state.present() ? List.of(state) : distinct(state, new State(put.value(), put.version()));
				case DeleteIfVersion delete ->
					(state.withVersion(delete.expected()) != null) ? distinct(state, State.EMPTY) : List.of(state);
			};
		}
		State next = switch (input) {
			case Read read -> (output instanceof Observed seen) ? read(state, seen) : null;
			case Write write -> (output instanceof Done) ? new State(write.value(), write.version()) : null;
			case Delete delete -> (output instanceof Done) ? State.EMPTY : null;
			case PutIfVersion put -> conditional(state, state.withVersion(put.expected()), put.expected(), output,
					new State(put.value(), put.version()));
			case PutIfAbsent put -> conditional(state, state.present() ? null : state, ABSENT, output,
					new State(put.value(), put.version()));
			case DeleteIfVersion delete ->
				conditional(state, state.withVersion(delete.expected()), delete.expected(), output, State.EMPTY);
		};
		return (next != null) ? List.of(next) : List.of();
	}

	private static @Nullable State read(State state, Observed seen) {
		if (!Objects.equals(state.value(), seen.value())) {
			return null;
		}
		if (seen.version() == UNKNOWN || !state.present()) {
			return state;
		}
		return state.withVersion(seen.version());
	}

	/**
	 * @param held the state when the condition holds in {@code state} (refined), else
	 * null
	 * @param expected the version the condition names ({@link #ABSENT} for
	 * {@code If-None-Match: *})
	 */
	private static @Nullable State conditional(State state, @Nullable State held, long expected, Output output,
			State written) {
		if (!(output instanceof Condition condition)) {
			return null;
		}
		if (condition.held()) {
			return (held != null) ? written : null;
		}
		boolean mayFail = (expected == ABSENT) ? state.present() : state.mayDiffer(expected);
		if (!mayFail) {
			return null;
		}
		if (condition.current() == UNKNOWN) {
			return state;
		}
		if (condition.current() == ABSENT) {
			return state.present() ? null : state;
		}
		if (condition.current() == expected || !state.present()) {
			return null;
		}
		return state.withVersion(condition.current());
	}

	private static void requirePositive(long expected) {
		if (expected <= ABSENT) {
			throw new IllegalArgumentException("If-Match names a version, not " + expected);
		}
	}

	private static List<State> distinct(State first, State second) {
		return first.equals(second) ? List.of(first) : List.of(first, second);
	}

}
