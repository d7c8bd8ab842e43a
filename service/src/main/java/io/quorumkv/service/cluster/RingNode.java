package io.quorumkv.service.cluster;

import java.net.URI;
import java.util.Objects;

/**
 * A node as the ring lists it.
 *
 * @param id its stable id (what placement hashes)
 * @param url its base URL
 * @param state where it stands in a change
 */
public record RingNode(String id, URI url, NodeState state) {

	public RingNode {
		Objects.requireNonNull(state, "state");
		url = new Node(id, url).url();
	}

	public Node node() {
		return new Node(this.id, this.url);
	}

	RingNode withState(NodeState next) {
		return new RingNode(this.id, this.url, next);
	}

}
