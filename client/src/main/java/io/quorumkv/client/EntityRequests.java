package io.quorumkv.client;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.function.BiFunction;

import io.netty.handler.codec.http.HttpMethod;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The plain requests of {@link QuorumKvClient}, each run by {@link Attempts} over the
 * {@link Transport}: a single entity's read and write, and one page of a range.
 */
final class EntityRequests {

	private final Transport transport;

	private final Attempts attempts;

	EntityRequests(Transport transport, Attempts attempts) {
		this.transport = transport;
		this.attempts = attempts;
	}

	Mono<byte[]> read(byte[] key, @Nullable Replicas replicas) {
		return read(key, Requests.entity(key, replicas), (node, answer) -> answer.body());
	}

	Mono<VersionedValue> readVersioned(byte[] key, @Nullable Replicas replicas) {
		return read(key, Requests.entity(key, replicas), EntityRequests::versioned);
	}

	/** A serial read ({@code consistency=serial}): the value and version, or empty. */
	Mono<VersionedValue> readSerial(byte[] key) {
		return read(key, Requests.serial(key), EntityRequests::versioned);
	}

	/**
	 * A read: what {@code found} makes of a 200 answer, empty on 404. {@code found} may
	 * throw a {@link QuorumKvException}, which fails the request like an error status.
	 */
	private <T> Mono<T> read(byte[] key, String path, BiFunction<URI, Answer, T> found) {
		return this.attempts.run(Operation.GET, key, (node) -> this.transport.exchange(HttpMethod.GET, node, path, null)
			.flatMapMany((answer) -> switch (answer.status()) {
				case 200 -> Flux.just(found.apply(node, answer));
				case 404 -> Flux.empty();
				default -> Flux.error(
						Failures.forStatus(Operation.GET, node, answer.status(), answer.body(), answer.retryAfter()));
			})).next();
	}

	/** A 200 answer's value with the version its {@code ETag} names. */
	private static VersionedValue versioned(URI node, Answer answer) {
		String etag = answer.etag();
		try {
			if (etag == null) {
				throw new IllegalArgumentException("no ETag");
			}
			return new VersionedValue(answer.body(), VersionedValue.parseEtag(etag));
		}
		catch (IllegalArgumentException ex) {
			throw new UnexpectedResponseException(
					Operation.GET + " at " + node + ": a value without a version: " + ex.getMessage(), node, 200, ex);
		}
	}

	Mono<Void> write(Operation operation, byte[] bytes, byte @Nullable [] value, @Nullable Replicas replicas,
			@Nullable Duration ttl) {
		String path = Requests.entity(bytes, replicas, ttl);
		HttpMethod method = (operation == Operation.PUT) ? HttpMethod.PUT : HttpMethod.DELETE;
		return this.attempts
			.run(operation, bytes, (node) -> this.transport.exchange(method, node, path, value)
				.flatMapMany((answer) -> (answer.status() / 100 == 2) ? Flux.<Void>empty() : Flux
					.error(Failures.forStatus(operation, node, answer.status(), answer.body(), answer.retryAfter()))))
			.then();
	}

	/**
	 * One page of a range, read whole ({@link QuorumKvClient#SCAN_PAGE} records at most,
	 * fewer when fewer are {@code wanted}, in the self-delimiting NDJSON format) and
	 * retried like a read: a scan resumes after the last key of the page before, so a
	 * node failing midway costs one page, never a repeated or a missing record.
	 */
	Mono<Page> page(byte[] from, boolean inclusive, byte @Nullable [] to, long wanted) {
		int size = (int) Math.min(wanted, QuorumKvClient.SCAN_PAGE);
		String path = Requests.range(from, inclusive, to, size);
		return this.attempts
			.run(Operation.SCAN, null,
					(node) -> this.transport.scan(node, path, NdjsonFormat.INSTANCE).collectList().flux())
			.next()
			.map((records) -> new Page(records, records.size() == size, wanted - records.size()));
	}

	/**
	 * @param full whether the page has all it asked for (there may be more after it)
	 * @param left records still wanted after this page
	 */
	record Page(List<KeyValue> records, boolean full, long left) {

		KeyValue last() {
			return this.records.get(this.records.size() - 1);
		}

	}

}
