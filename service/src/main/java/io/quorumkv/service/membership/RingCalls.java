package io.quorumkv.service.membership;

import java.time.Duration;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.peer.PeerClient;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpMethod;

/**
 * The calls of the ring protocol ({@code /internal/v0/ring...}, transfers, cleanup),
 * through the node's one peer transport.
 */
final class RingCalls {

	private RingCalls() {
	}

	/**
	 * The answer's status and text whatever the status, so that a refusal can be read; a
	 * transport failure or silence for {@code timeout} fails it. Not guarded by the
	 * breaker: an agreement must reach a peer the data path has given up on for a while.
	 */
	static Mono<Reply> get(PeerClient peers, Node peer, String pathAndQuery, Duration timeout) {
		return call(peers, HttpMethod.GET, peer, pathAndQuery, timeout);
	}

	/** {@link #get} of a {@code POST} without a body. */
	static Mono<Reply> post(PeerClient peers, Node peer, String pathAndQuery, Duration timeout) {
		return call(peers, HttpMethod.POST, peer, pathAndQuery, timeout);
	}

	private static Mono<Reply> call(PeerClient peers, HttpMethod method, Node peer, String pathAndQuery,
			Duration timeout) {
		return peers
			.call(peer, method, pathAndQuery, null, null,
					(response) -> response.bodyToMono(String.class)
						.defaultIfEmpty("")
						.map((body) -> new Reply(response.statusCode().value(), body)))
			.timeout(timeout, peers.timers());
	}

	/**
	 * An answer of the ring protocol.
	 *
	 * @param status the HTTP status
	 * @param body the answer's text (JSON on success, a reason on refusal)
	 */
	record Reply(int status, String body) {

		boolean ok() {
			return this.status / 100 == 2;
		}

	}

}
