package io.quorumkv.service.cluster;

import java.net.URI;
import java.util.Objects;

/**
 * One node of the cluster, named by its base URL (scheme, host and port, no path), as
 * listed in {@code quorumkv.cluster.nodes}.
 *
 * @param url the node's base URL, e.g. {@code http://127.0.0.1:8081}
 */
public record Node(URI url) {

	public Node {
		Objects.requireNonNull(url, "url");
		if (url.getScheme() == null || url.getHost() == null || url.getPort() < 0) {
			throw new IllegalArgumentException("node URL needs scheme, host and port: " + url);
		}
	}

	public static Node of(String url) {
		return new Node(URI.create(url));
	}

	/** The canonical text of the URL; what placement hashes. */
	public String id() {
		return this.url.getScheme() + "://" + this.url.getHost() + ":" + this.url.getPort();
	}

	@Override
	public String toString() {
		return id();
	}

}
