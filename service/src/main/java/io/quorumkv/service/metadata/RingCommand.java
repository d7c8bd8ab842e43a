package io.quorumkv.service.metadata;

import java.nio.charset.StandardCharsets;

import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingJson;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * An entry of the metadata log, as JSON:
 * <ul>
 * <li>{@code {"op":"change","base":E,"ring":{…}}}: the ring of epoch {@code E+1} that
 * follows the ring of epoch {@code E}; applied only when the log's ring is at epoch
 * {@code E} (a compare-and-set on the epoch).</li>
 * <li>{@code {"op":"format","ring":{…}}}: a node's ring from before the log (its first
 * start on Raft, or a cluster that ran without it); applied only when the log holds no
 * ring yet, or an older one of the same cluster.</li>
 * </ul>
 *
 * @param format whether this is a format entry
 * @param base the epoch a change is made against (0 for a format entry)
 * @param ring the ring it proposes
 */
record RingCommand(boolean format, long base, Ring ring) {

	private static final JsonMapper JSON = JsonMapper.shared();

	static RingCommand change(long base, Ring next) {
		return new RingCommand(false, base, next);
	}

	static RingCommand format(Ring ring) {
		return new RingCommand(true, 0, ring);
	}

	byte[] toBytes() {
		ObjectNode root = JSON.createObjectNode();
		root.put("op", this.format ? "format" : "change");
		if (!this.format) {
			root.put("base", this.base);
		}
		root.set("ring", RingJson.fullTree(this.ring));
		return JSON.writeValueAsBytes(root);
	}

	static RingCommand read(byte[] bytes) {
		try {
			JsonNode root = JSON.readTree(bytes);
			Ring ring = RingJson.read(root.required("ring"));
			return switch (root.required("op").asString()) {
				case "format" -> format(ring);
				case "change" -> change(root.required("base").asLong(), ring);
				default -> throw new IllegalArgumentException("unknown operation " + root.path("op"));
			};
		}
		catch (JacksonException ex) {
			throw new IllegalArgumentException("not a metadata log entry: " + ex.getMessage(), ex);
		}
	}

	/**
	 * What applying an entry did: applied (the log's ring is now of {@code epoch}), or
	 * refused with the epoch of the log's ring and why.
	 *
	 * @param applied whether the entry changed the ring
	 * @param epoch the epoch of the log's ring after the entry
	 * @param reason why it was refused, or null
	 */
	record Outcome(boolean applied, long epoch, @Nullable String reason) {

		byte[] toBytes() {
			ObjectNode root = JSON.createObjectNode();
			root.put("applied", this.applied);
			root.put("epoch", this.epoch);
			if (this.reason != null) {
				root.put("reason", this.reason);
			}
			return JSON.writeValueAsBytes(root);
		}

		static Outcome read(byte[] bytes) {
			JsonNode root = JSON.readTree(new String(bytes, StandardCharsets.UTF_8));
			JsonNode reason = root.path("reason");
			return new Outcome(root.required("applied").asBoolean(), root.required("epoch").asLong(),
					reason.isMissingNode() ? null : reason.asString());
		}

	}

	/**
	 * Applies this entry to the log's ring {@code current}: the same on every node, from
	 * the ring and the entry alone.
	 */
	Outcome applyTo(@Nullable Ring current) {
		long epoch = (current != null) ? current.epoch() : 0;
		if (current != null && !current.clusterId().equals(this.ring.clusterId())) {
			return new Outcome(false, epoch,
					"the log is of cluster " + current.clusterId() + ", the entry of " + this.ring.clusterId());
		}
		if (this.format) {
			return (this.ring.epoch() > epoch) ? new Outcome(true, this.ring.epoch(), null)
					: new Outcome(false, epoch, "the log's ring is at epoch " + epoch + " already");
		}
		if (current == null) {
			return new Outcome(false, 0, "the log holds no ring yet");
		}
		if (this.base != epoch) {
			return new Outcome(false, epoch, "stale: the change was made against epoch " + this.base
					+ ", the ring is at epoch " + epoch + " (another change was applied first)");
		}
		if (this.ring.epoch() != this.base + 1) {
			return new Outcome(false, epoch, "a change against epoch " + this.base + " proposes epoch "
					+ (this.base + 1) + ", not " + this.ring.epoch());
		}
		return new Outcome(true, this.ring.epoch(), null);
	}

}
