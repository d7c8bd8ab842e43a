package io.quorumkv.service.membership;

import java.util.Objects;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingJson;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * A ring change put to the participants: the ring that follows the one of epoch
 * {@code baseEpoch}, and who coordinates it.
 *
 * @param id unique id of the proposal
 * @param baseEpoch the epoch it changes; a participant of another epoch refuses it
 * @param next the proposed ring, of epoch {@code baseEpoch + 1}
 * @param coordinator the node that proposes it and alone decides its outcome
 * @param createdAtMillis when it was proposed (wall clock), for its lease
 */
record Proposal(String id, long baseEpoch, Ring next, Node coordinator, long createdAtMillis) {

	private static final JsonMapper JSON = JsonMapper.shared();

	Proposal {
		Objects.requireNonNull(id, "id");
		if (next.epoch() != baseEpoch + 1) {
			throw new IllegalArgumentException("a proposal on epoch " + baseEpoch + " proposes epoch " + (baseEpoch + 1)
					+ ", not " + next.epoch());
		}
	}

	String toJson() {
		return JSON.writeValueAsString(tree());
	}

	ObjectNode tree() {
		ObjectNode root = JSON.createObjectNode();
		root.put("id", this.id);
		root.put("baseEpoch", this.baseEpoch);
		root.put("coordinator", this.coordinator.id());
		root.put("coordinatorUrl", this.coordinator.base());
		root.put("createdAt", this.createdAtMillis);
		root.set("ring", RingJson.fullTree(this.next));
		return root;
	}

	static Proposal fromJson(String text) {
		try {
			return fromTree(JSON.readTree(text));
		}
		catch (JacksonException ex) {
			throw new IllegalArgumentException("not a valid proposal: " + ex.getMessage(), ex);
		}
	}

	static Proposal fromTree(JsonNode root) {
		try {
			return new Proposal(root.required("id").stringValue(), root.required("baseEpoch").asLong(),
					RingJson.read(root.required("ring")),
					Node.of(root.required("coordinator").stringValue(), root.required("coordinatorUrl").stringValue()),
					root.required("createdAt").asLong());
		}
		catch (JacksonException | NullPointerException ex) {
			throw new IllegalArgumentException("not a valid proposal: " + ex.getMessage(), ex);
		}
	}

	String describe() {
		return "proposal " + this.id + " (epoch " + this.baseEpoch + " -> " + this.next.describe() + ", coordinated by "
				+ this.coordinator + ")";
	}

}
