package io.quorumkv.service.http;

import io.quorumkv.service.cluster.ClusterState;

import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;

/**
 * Puts the epoch of the ring this node serves under on its public answers, as
 * {@value #NAME}: a replica-aware client that sees an epoch newer than its ring's reads
 * the ring again ({@code GET /v0/ring}) instead of waiting for its next poll. No header
 * while the node has no ring. The header's text is made once per epoch and shared by
 * every answer under it: the hot path reads the epoch, compares it, and sets the header.
 */
@Component
final class EpochHeader {

	static final String NAME = "X-QuorumKV-Epoch";

	private final ClusterState state;

	/** The text of the last epoch stamped; replaced whole when the epoch moves. */
	private volatile Text last = new Text(0, "0");

	EpochHeader(ClusterState state) {
		this.state = state;
	}

	/** Sets the header on {@code response} (before it is committed). */
	void stamp(ServerHttpResponse response) {
		long epoch = this.state.epoch();
		if (epoch == 0) {
			return;
		}
		Text text = this.last;
		if (text.epoch() != epoch) {
			text = new Text(epoch, Long.toString(epoch));
			this.last = text;
		}
		response.getHeaders().set(NAME, text.value());
	}

	/** An epoch and its decimal text. */
	private record Text(long epoch, String value) {

	}

}
