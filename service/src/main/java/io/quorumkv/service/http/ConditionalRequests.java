package io.quorumkv.service.http;

import io.quorumkv.service.paxos.Paxos;
import io.quorumkv.service.paxos.Paxos.Outcome;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The requests decided by Paxos on their key ({@link Paxos}): a write with conditions
 * ({@link WriteConditions}), answered 201 (PUT) or 202 (DELETE) with the written version
 * as {@code ETag}, or 412 with the current one (none when the key has no value); and a
 * read with {@code consistency=serial}. They use a majority of the key's replicas: a
 * request naming {@code replicas}, {@code ack} or {@code from} as well is a 400.
 */
@Component
class ConditionalRequests {

	static final String SERIAL = "serial";

	private final Paxos paxos;

	ConditionalRequests(Paxos paxos) {
		this.paxos = paxos;
	}

	/**
	 * Whether a read asks for {@code consistency=serial}.
	 * @throws ApiException 400 for another consistency, or one with replicas
	 */
	static boolean serial(QueryParameters query) {
		String consistency = query.text("consistency");
		if (consistency == null) {
			return false;
		}
		if (!consistency.equals(SERIAL)) {
			throw ApiException.badRequest("consistency must be 'serial' (or absent: a read at 'ack' replicas)");
		}
		noReplicas(query, "a serial read");
		return true;
	}

	/** A request decided by Paxos names no replicas: it uses a majority. */
	static void noReplicas(QueryParameters query, String what) {
		for (String name : new String[] { "replicas", "ack", "from" }) {
			if (query.has(name)) {
				throw ApiException.badRequest(
						"parameter '" + name + "' does not apply to " + what + ": it uses a majority of the replicas");
			}
		}
	}

	/** A PUT ({@code value}) or DELETE (null) with conditions. */
	Mono<ServerResponse> write(byte[] key, byte @Nullable [] value, long ttlSeconds, WriteConditions conditions) {
		HttpStatusCode applied = (value != null) ? HttpStatus.CREATED : HttpStatus.ACCEPTED;
		return this.paxos.write(key, value, ttlSeconds, conditions).map((outcome) -> switch (outcome) {
			case Outcome.Applied written -> Reply.written(applied, Versions.etag(written.entry()));
			case Outcome.Failed failed ->
				Reply.preconditionFailed((failed.current() != null) ? Versions.etag(failed.current()) : null);
			case Outcome.Read read -> throw new IllegalStateException("a write answered as a read");
		});
	}

	/** A serial read: as a GET answers, after completing any write in progress. */
	Mono<ServerResponse> read(byte[] key, @Nullable String ifNoneMatch) {
		return this.paxos.read(key).<ServerResponse>map((entry) -> {
			String etag = Versions.etag(entry);
			return Versions.matches(ifNoneMatch, etag) ? Reply.notModified(etag) : Reply.value(entry.value(), etag);
		}).defaultIfEmpty(Reply.text(HttpStatus.NOT_FOUND, "not found"));
	}

}
