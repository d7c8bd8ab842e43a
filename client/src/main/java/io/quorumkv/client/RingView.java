package io.quorumkv.client;

import java.net.URI;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * The ring as a client reads it from {@code GET /v0/ring} ({@code docs/api.md}), with the
 * key placement computed once: which nodes hold a key.
 *
 * <p>
 * The placement members are the nodes in state {@code normal} or {@code leaving}: a key's
 * owners before the change under way, if any, which serve its reads until the handover
 * and take its writes throughout. A {@code joining} node is left out (the public form
 * does not say whether it joins or takes a dead node's place), so while a node is
 * replaced the client may send some keys to a node that is not their replica; that node
 * coordinates them as any node does, at the cost of a hop. Nodes in a state the client
 * does not know are left out the same way.
 *
 * @param clusterId the cluster's id
 * @param epoch the ring's version
 * @param replicationFactor nodes that hold each key
 * @param members the placement members' URLs, in the placement's canonical order
 * @param placement where a key goes, as indices into {@code members}
 * @param nodes every node that is not removed (members and joining nodes)
 */
record RingView(String clusterId, long epoch, int replicationFactor, List<URI> members, RingPlacement placement,
		Set<URI> nodes) {

	/** The most nodes a ring may list for the client to route by it. */
	static final int MAX_NODES = 4096;

	/** The largest ring document read, in characters. */
	static final int MAX_TEXT = 1 << 20;

	RingView {
		members = List.copyOf(members);
		nodes = Set.copyOf(nodes);
	}

	/** The URLs of the nodes that hold {@code key}, most preferred first. */
	List<URI> replicas(byte[] key) {
		int[] indices = this.placement.replicas(key, Math.min(this.replicationFactor, this.members.size()));
		List<URI> replicas = new ArrayList<>(indices.length);
		for (int index : indices) {
			replicas.add(this.members.get(index));
		}
		return replicas;
	}

	/**
	 * Reads the public ring.
	 * @param text the JSON of {@code GET /v0/ring}
	 * @param scheme the client's scheme ({@code http} or {@code https}): a ring whose
	 * nodes have another is refused, so that a client of a TLS cluster never sends a
	 * request, and its credential, in clear text
	 * @throws IllegalArgumentException when it is not a ring the client can route by
	 */
	static RingView parse(String text, String scheme) {
		if (text.length() > MAX_TEXT) {
			throw new IllegalArgumentException("a ring of " + text.length() + " characters is too large");
		}
		Map<?, ?> root = field(JsonReader.read(text), "the ring", Map.class);
		String clusterId = field(root.get("clusterId"), "clusterId", String.class);
		long epoch = field(root.get("epoch"), "epoch", Long.class);
		long replicationFactor = field(root.get("replicationFactor"), "replicationFactor", Long.class);
		Map<?, ?> placement = field(root.get("placement"), "placement", Map.class);
		String strategy = field(placement.get("strategy"), "placement.strategy", String.class);
		long virtualNodes = field(placement.get("virtualNodes"), "placement.virtualNodes", Long.class);
		List<?> listed = field(root.get("nodes"), "nodes", List.class);
		if (epoch < 1 || replicationFactor < 1 || virtualNodes < 1 || virtualNodes > 65_536
				|| listed.size() > MAX_NODES) {
			throw new IllegalArgumentException("a ring out of bounds: epoch " + epoch + ", replication factor "
					+ replicationFactor + ", " + virtualNodes + " virtual nodes, " + listed.size() + " nodes");
		}
		List<Member> members = new ArrayList<>();
		Set<URI> nodes = new HashSet<>();
		for (Object entry : listed) {
			Map<?, ?> node = field(entry, "a node", Map.class);
			String id = field(node.get("id"), "a node's id", String.class);
			URI url = url(field(node.get("url"), "a node's url", String.class), scheme);
			String state = field(node.get("state"), "a node's state", String.class);
			if (state.equals("removed")) {
				continue;
			}
			nodes.add(url);
			if (state.equals("normal") || state.equals("leaving")) {
				members.add(new Member(id, url));
			}
		}
		if (members.isEmpty()) {
			throw new IllegalArgumentException("a ring without a member");
		}
		members.sort(Comparator.comparing(Member::id));
		List<String> ids = members.stream().map(Member::id).toList();
		if (ids.stream().distinct().count() != ids.size()) {
			throw new IllegalArgumentException("a ring that lists a node twice");
		}
		RingPlacement keys = switch (strategy) {
			case "rendezvous" -> new RingPlacement.Rendezvous(ids);
			case "consistent-hash" -> new RingPlacement.ConsistentHash(ids, (int) virtualNodes);
			default -> throw new IllegalArgumentException("an unknown placement strategy '" + strategy + "'");
		};
		return new RingView(clusterId, epoch, (int) Math.min(replicationFactor, MAX_NODES),
				members.stream().map(Member::url).toList(), keys, nodes);
	}

	private static URI url(String text, String scheme) {
		URI url = URI.create(text);
		if (!scheme.equals(url.getScheme()) || url.getHost() == null || url.getPort() < 0) {
			throw new IllegalArgumentException(
					"a node URL the client cannot use: '" + text + "' (the client's seeds are " + scheme + "://)");
		}
		return url;
	}

	private static <T> T field(@Nullable Object value, String name, Class<T> type) {
		if (!type.isInstance(value)) {
			throw new IllegalArgumentException(name + " is missing or not a " + type.getSimpleName());
		}
		return type.cast(value);
	}

	private record Member(String id, URI url) {

	}

}
