package io.quorumkv.service.cluster;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import io.quorumkv.service.cluster.RingChange.Kind;
import io.quorumkv.service.cluster.RingChange.Phase;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The ring as JSON: the one spelling of it on disk ({@link RingFile}), between nodes and
 * to clients ({@code GET /v0/ring}).
 *
 * <pre>{@code
 * {"clusterId":"qkv-…","epoch":3,"replicationFactor":3,
 *  "placement":{"strategy":"rendezvous","virtualNodes":128},
 *  "nodes":[{"id":"http://127.0.0.1:8081","url":"http://127.0.0.1:8081","state":"normal"}, …],
 *  "change":{"id":"…","kind":"join","node":"node-…","coordinator":"…","phase":"streaming"},
 *  "metadataGroup":{"generation":1,"fenced":[{"id":"…","url":"…"}]}}
 * }</pre> {@code change} is absent outside a change, and always absent from the public
 * form; {@code metadataGroup} ({@link GroupGeneration}) is absent from a ring that was
 * never forced, and from the public form.
 */
public final class RingJson {

	private static final JsonMapper JSON = JsonMapper.shared();

	private RingJson() {
	}

	/** Every field, the change included: what nodes store and exchange. */
	public static String write(Ring ring) {
		return JSON.writeValueAsString(fullTree(ring));
	}

	/** {@link #write}'s tree, to nest a ring in another message. */
	public static ObjectNode fullTree(Ring ring) {
		ObjectNode root = tree(ring);
		RingChange change = ring.change();
		if (change != null) {
			ObjectNode node = root.putObject("change");
			node.put("id", change.id());
			node.put("kind", change.kind().label());
			node.put("node", change.nodeId());
			node.put("coordinator", change.coordinator());
			node.put("phase", change.phase().label());
		}
		GroupGeneration generation = ring.generation();
		if (generation.number() > 0) {
			ObjectNode group = root.putObject("metadataGroup");
			group.put("generation", generation.number());
			ArrayNode fenced = group.putArray("fenced");
			for (RingNode node : generation.fenced()) {
				fenced.addObject().put("id", node.id()).put("url", node.url().toString());
			}
		}
		return root;
	}

	/** {@link #write}'s content as maps and lists, for the operator views. */
	@SuppressWarnings("unchecked")
	public static java.util.Map<String, Object> map(Ring ring) {
		return JSON.readValue(write(ring), java.util.Map.class);
	}

	/** What clients read for replica-aware routing: no change details. */
	public static String writePublic(Ring ring) {
		return JSON.writeValueAsString(tree(ring));
	}

	private static ObjectNode tree(Ring ring) {
		ObjectNode root = JSON.createObjectNode();
		root.put("clusterId", ring.clusterId());
		root.put("epoch", ring.epoch());
		root.put("replicationFactor", ring.replicationFactor());
		ObjectNode placement = root.putObject("placement");
		placement.put("strategy", strategyLabel(ring.strategy()));
		placement.put("virtualNodes", ring.virtualNodes());
		ArrayNode nodes = root.putArray("nodes");
		for (RingNode node : ring.nodes()) {
			ObjectNode entry = nodes.addObject();
			entry.put("id", node.id());
			entry.put("url", node.url().toString());
			entry.put("state", node.state().label());
		}
		return root;
	}

	/**
	 * The strategy's configuration name: {@code rendezvous} or {@code consistent-hash}.
	 */
	public static String strategyLabel(PlacementStrategy strategy) {
		return strategy.name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

	/**
	 * Reads a ring written by {@link #write}.
	 * @throws IllegalArgumentException when the text is not a valid ring
	 */
	public static Ring read(String text) {
		try {
			return read(JSON.readTree(text));
		}
		catch (JacksonException ex) {
			throw new IllegalArgumentException("not a valid ring: " + ex.getMessage(), ex);
		}
	}

	/**
	 * Reads a ring from {@link #fullTree}'s tree.
	 * @throws IllegalArgumentException when it is not a valid ring
	 */
	public static Ring read(JsonNode root) {
		try {
			List<RingNode> nodes = new ArrayList<>();
			for (JsonNode node : root.required("nodes").values()) {
				nodes.add(new RingNode(text(node, "id"), URI.create(text(node, "url")),
						NodeState.of(text(node, "state"))));
			}
			JsonNode placement = root.required("placement");
			PlacementStrategy strategy = PlacementStrategy
				.valueOf(text(placement, "strategy").toUpperCase(Locale.ROOT).replace('-', '_'));
			JsonNode change = root.get("change");
			RingChange parsed = (change == null || change.isNull()) ? null
					: new RingChange(text(change, "id"), Kind.of(text(change, "kind")), text(change, "node"),
							text(change, "coordinator"), Phase.of(text(change, "phase")));
			return new Ring(text(root, "clusterId"), root.required("epoch").asLong(),
					root.required("replicationFactor").asInt(), strategy, placement.required("virtualNodes").asInt(),
					nodes, parsed, generation(root.get("metadataGroup")));
		}
		catch (JacksonException | IllegalArgumentException | NullPointerException ex) {
			throw new IllegalArgumentException("not a valid ring: " + ex.getMessage(), ex);
		}
	}

	/** The metadata group generation; the first when absent (a ring never forced). */
	private static GroupGeneration generation(@Nullable JsonNode group) {
		if (group == null || group.isNull()) {
			return GroupGeneration.FIRST;
		}
		List<RingNode> fenced = new ArrayList<>();
		for (JsonNode node : group.required("fenced").values()) {
			fenced.add(new RingNode(text(node, "id"), URI.create(text(node, "url")), NodeState.NORMAL));
		}
		return new GroupGeneration(group.required("generation").asLong(), fenced);
	}

	private static String text(JsonNode node, String field) {
		JsonNode value = node.required(field);
		if (!value.isString()) {
			throw new IllegalArgumentException(field + " must be a string");
		}
		return value.stringValue();
	}

}
