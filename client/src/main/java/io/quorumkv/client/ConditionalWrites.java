package io.quorumkv.client;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The conditional writes of {@link QuorumKvClient} ({@code docs/api.md}, "Versions"):
 * {@code PUT} with {@code If-Match: "<version>"} or {@code If-None-Match: *},
 * {@code DELETE} with {@code If-Match}, and the read-modify-write loop built on them. A
 * 412 is an answer ({@link ConditionResult} not held), not a failure; a 501 is
 * {@link UnsupportedByNodeException}. A conditional write that may have reached a node is
 * never sent again ({@link Attempts}' rule), so the result seen is the write's own.
 */
final class ConditionalWrites {

	private final Transport transport;

	private final Attempts attempts;

	/** The read of {@code update}: a key's value with its version, empty when absent. */
	private final Function<byte[], Mono<VersionedValue>> read;

	ConditionalWrites(Transport transport, Attempts attempts, Function<byte[], Mono<VersionedValue>> read) {
		this.transport = transport;
		this.attempts = attempts;
		this.read = read;
	}

	Mono<ConditionResult> putIf(byte[] key, byte[] value, long version) {
		return write(Operation.PUT_IF, key, value, HttpHeaderNames.IF_MATCH, etag(version));
	}

	Mono<ConditionResult> putIfAbsent(byte[] key, byte[] value) {
		return write(Operation.PUT_IF, key, value, HttpHeaderNames.IF_NONE_MATCH, "*");
	}

	Mono<ConditionResult> deleteIf(byte[] key, long version) {
		return write(Operation.DELETE_IF, key, null, HttpHeaderNames.IF_MATCH, etag(version));
	}

	/**
	 * Reads {@code key}, applies {@code change} to its value (empty when absent) and
	 * writes the result on the condition that the version read is still current
	 * ({@code If-None-Match: *} when it was absent); on a 412, waits and starts again, as
	 * {@code policy} allows. Emits the value written.
	 */
	Mono<byte[]> update(byte[] key, Function<Optional<byte[]>, byte[]> change, UpdatePolicy policy) {
		return Mono.defer(() -> round(key, change, policy, 1));
	}

	private Mono<byte[]> round(byte[] key, Function<Optional<byte[]>, byte[]> change, UpdatePolicy policy, int round) {
		return this.read.apply(key).map(Optional::of).defaultIfEmpty(Optional.empty()).flatMap((current) -> {
			byte[] next = Objects.requireNonNull(change.apply(current.map(VersionedValue::value)),
					"the update function returned null");
			byte[] sent = next.clone();
			Mono<ConditionResult> write = current.isPresent() ? putIf(key, sent, current.get().version())
					: putIfAbsent(key, sent);
			return write.flatMap((result) -> {
				if (result.held()) {
					return Mono.just(next);
				}
				if (round >= policy.maxAttempts()) {
					UpdateConflictException conflict = new UpdateConflictException(
							"update of " + describe(key) + ": another writer changed it before each of " + round
									+ " conditional writes (412 each time)");
					conflict.recordAttempts(round, false);
					return Mono.<byte[]>error(conflict);
				}
				return Mono.delay(policy.delay(round + 1, ThreadLocalRandom.current()))
					.then(Mono.defer(() -> round(key, change, policy, round + 1)));
			});
		});
	}

	private Mono<ConditionResult> write(Operation operation, byte[] key, byte @Nullable [] value, CharSequence header,
			String condition) {
		String path = Requests.entity(key, null);
		HttpMethod method = (operation == Operation.PUT_IF) ? HttpMethod.PUT : HttpMethod.DELETE;
		return this.attempts
			.run(operation, key, (node) -> this.transport.exchange(method, node, path, value, header, condition)
				.flatMapMany((answer) -> {
					if (answer.status() / 100 == 2) {
						return Flux.just(new ConditionResult(true, version(operation, node, answer)));
					}
					if (answer.status() == 412) {
						return Flux.just(new ConditionResult(false, version(operation, node, answer)));
					}
					return Flux.<ConditionResult>error(
							Failures.forStatus(operation, node, answer.status(), answer.body(), answer.retryAfter()));
				}))
			.next();
	}

	/** The version an answer's {@code ETag} names, empty without one. */
	private static OptionalLong version(Operation operation, URI node, Answer answer) {
		String etag = answer.etag();
		if (etag == null) {
			return OptionalLong.empty();
		}
		try {
			return OptionalLong.of(VersionedValue.parseEtag(etag));
		}
		catch (IllegalArgumentException ex) {
			throw new UnexpectedResponseException(
					operation + " at " + node + ": " + answer.status() + " with a malformed ETag: " + ex.getMessage(),
					node, answer.status(), ex);
		}
	}

	private static String etag(long version) {
		if (version <= 0) {
			throw new IllegalArgumentException("a version is positive, not " + version);
		}
		return "\"" + Long.toHexString(version) + "\"";
	}

	private static String describe(byte[] key) {
		String text = new String(key, StandardCharsets.UTF_8);
		return (text.length() > 64) ? text.substring(0, 64) + "..." : text;
	}

}
