package io.quorumkv.service.cluster;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;

/**
 * What both placements share: the hash and the canonical, validated node list.
 *
 * <p>
 * Every hash here is XXH3-64 with seed 0. XXH3 is a specified algorithm, so the values
 * are the same on every JVM and every hash4j version; that is what makes placement agree
 * across the cluster and across a rolling upgrade. Changing any hash here moves data:
 * {@code PlacementPinnedTests} pins the answers so such a change cannot go unnoticed.
 */
final class PlacementSupport {

	/** Stateless and thread-safe: one instance for every call, nothing allocated. */
	private static final Hasher64 XXH3 = Hashing.xxh3_64();

	private PlacementSupport() {
	}

	/** The key's position: XXH3-64 of its bytes. */
	static long keyHash(byte[] key) {
		return XXH3.hashBytesToLong(key);
	}

	/** A node's seed: XXH3-64 of the UTF-8 bytes of {@link Node#id()}. */
	static long nodeSeed(Node node) {
		return XXH3.hashBytesToLong(node.id().getBytes(StandardCharsets.UTF_8));
	}

	/** XXH3-64 of the two longs; full avalanche over both. */
	static long mix(long a, long b) {
		return XXH3.hashLongLongToLong(a, b);
	}

	/**
	 * The nodes sorted by id, after checking the list is non-empty, has no null and no
	 * two nodes with the same id (they would hash the same).
	 */
	static List<Node> canonicalNodes(List<Node> nodes) {
		Objects.requireNonNull(nodes, "nodes");
		if (nodes.isEmpty()) {
			throw new IllegalArgumentException("placement needs at least one node");
		}
		List<Node> sorted = new ArrayList<>(nodes.size());
		for (Node node : nodes) {
			sorted.add(Objects.requireNonNull(node, "nodes contains null"));
		}
		sorted.sort(Comparator.comparing(Node::id));
		for (int i = 1; i < sorted.size(); i++) {
			if (sorted.get(i).id().equals(sorted.get(i - 1).id())) {
				throw new IllegalArgumentException("duplicate node in placement: " + sorted.get(i).id());
			}
		}
		return List.copyOf(sorted);
	}

	static void checkRequest(byte[] key, int count, int size) {
		Objects.requireNonNull(key, "key");
		if (count < 1 || count > size) {
			throw new IllegalArgumentException(
					"replica count must be between 1 and the node count " + size + ", was " + count);
		}
	}

}
