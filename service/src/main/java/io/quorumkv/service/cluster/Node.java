package io.quorumkv.service.cluster;

import java.net.InetSocketAddress;
import java.net.URI;
import java.util.Objects;

import reactor.netty.transport.AddressUtils;

/**
 * One node of the cluster: its stable id, which placement hashes, and its base URL
 * (scheme, host and port, no path), where its peers and clients reach it.
 *
 * <p>
 * The id is kept in the node's data folder ({@code NodeIdentity}), so a node that moves
 * to another host or port keeps its place and its data. A node of the seed list
 * ({@code quorumkv.cluster.nodes}) is given the canonical text of its URL as its id on
 * its first start, which keeps the placement of a cluster created before ids existed; a
 * node that joins later gets a fresh random id.
 *
 * @param id the stable id; what placement hashes
 * @param url the node's base URL, e.g. {@code http://127.0.0.1:8081}; anything after the
 * port is dropped
 */
public record Node(String id, URI url) {

	public Node {
		Objects.requireNonNull(id, "id");
		if (id.isBlank() || id.length() > 256 || id.chars().anyMatch((c) -> c <= ' ' || c >= 127)) {
			throw new IllegalArgumentException(
					"a node id must be 1 to 256 printable ASCII characters without spaces, was '" + id + "'");
		}
		url = canonical(url);
	}

	/** A node whose id is its URL's canonical text (a seed node's first id). */
	public Node(URI url) {
		this(canonical(url).toString(), url);
	}

	public static Node of(String url) {
		return new Node(URI.create(url));
	}

	public static Node of(String id, String url) {
		return new Node(id, URI.create(url));
	}

	static URI canonical(URI url) {
		Objects.requireNonNull(url, "url");
		if (url.getScheme() == null || url.getHost() == null || url.getPort() < 0) {
			throw new IllegalArgumentException("node URL needs scheme, host and port: " + url);
		}
		return URI.create(url.getScheme() + "://" + url.getHost() + ":" + url.getPort());
	}

	/**
	 * The node's socket address as Reactor Netty's client names it (resolved for an IP
	 * literal, unresolved for a host name): the key of its connection pool.
	 */
	public InetSocketAddress address() {
		return AddressUtils.createUnresolved(this.url.getHost(), this.url.getPort());
	}

	/** The base URL as text, to which a path is appended. */
	public String base() {
		return this.url.toString();
	}

	@Override
	public String toString() {
		return this.id.equals(base()) ? this.id : this.id + "@" + base();
	}

}
