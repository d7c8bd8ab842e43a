package io.quorumkv.service.cluster;

import java.net.InetSocketAddress;
import java.net.URI;
import java.util.Objects;

import reactor.netty.transport.AddressUtils;

/**
 * One node of the cluster, named by its base URL (scheme, host and port, no path), as
 * listed in {@code quorumkv.cluster.nodes}. The URL is kept in that canonical form, so
 * that {@link #id()} is the URL's own text: computed once, not on each of the several
 * calls a request makes (it was about 2% of a node's allocation under load).
 *
 * @param url the node's base URL, e.g. {@code http://127.0.0.1:8081}; anything after the
 * port is dropped
 */
public record Node(URI url) {

	public Node {
		Objects.requireNonNull(url, "url");
		if (url.getScheme() == null || url.getHost() == null || url.getPort() < 0) {
			throw new IllegalArgumentException("node URL needs scheme, host and port: " + url);
		}
		url = URI.create(url.getScheme() + "://" + url.getHost() + ":" + url.getPort());
	}

	public static Node of(String url) {
		return new Node(URI.create(url));
	}

	/**
	 * The node's socket address as Reactor Netty's client names it (resolved for an IP
	 * literal, unresolved for a host name): the key of its connection pool.
	 */
	public InetSocketAddress address() {
		return AddressUtils.createUnresolved(this.url.getHost(), this.url.getPort());
	}

	/** The canonical text of the URL; what placement hashes. */
	public String id() {
		return this.url.toString();
	}

	@Override
	public String toString() {
		return id();
	}

}
