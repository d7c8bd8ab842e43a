package io.quorumkv.service.cluster;

import java.util.Locale;
import java.util.Objects;

/**
 * The membership change a ring is in the middle of. A change goes through two agreed
 * rings after the one that starts it: {@link Phase#STREAMING} (writes go to the old and
 * the new owners, reads to the old ones, the new owners pull their data), then
 * {@link Phase#HANDOVER} (writes still to both, reads to the new owners), then a ring
 * without a change (the new owners alone).
 *
 * @param id unique id of the change, for progress and logs
 * @param kind what changes
 * @param nodeId the node joining, leaving, removed, or whose place is taken
 * @param coordinator id of the node that drives the change
 * @param phase where the change stands
 */
public record RingChange(String id, Kind kind, String nodeId, String coordinator, Phase phase) {

	public RingChange {
		Objects.requireNonNull(id, "id");
		Objects.requireNonNull(kind, "kind");
		Objects.requireNonNull(nodeId, "nodeId");
		Objects.requireNonNull(coordinator, "coordinator");
		Objects.requireNonNull(phase, "phase");
	}

	RingChange withPhase(Phase next) {
		return new RingChange(this.id, this.kind, this.nodeId, this.coordinator, next);
	}

	/**
	 * The node this change treats as dead: it takes part in no agreement and streams
	 * nothing (the survivors do).
	 */
	public boolean declaresDead(String id) {
		return this.kind == Kind.REMOVE && this.nodeId.equals(id);
	}

	/** The kinds of change. */
	public enum Kind {

		/** A new node takes its share of the keys. */
		JOIN,
		/** A live node streams its keys to their new owners, then leaves. */
		DECOMMISSION,
		/**
		 * A dead node's keys are re-created on new owners from the surviving replicas.
		 */
		REMOVE,
		/**
		 * A new node takes a dead node's id, and so its place, and streams its keys from
		 * the surviving replicas.
		 */
		REPLACE;

		public String label() {
			return name().toLowerCase(Locale.ROOT);
		}

		static Kind of(String label) {
			return valueOf(label.toUpperCase(Locale.ROOT));
		}

	}

	/** The phases of a change. */
	public enum Phase {

		/**
		 * Writes to old and new owners, reads from the old; new owners pull their data.
		 */
		STREAMING,
		/** Writes to old and new owners, reads from the new. */
		HANDOVER;

		public String label() {
			return name().toLowerCase(Locale.ROOT);
		}

		static Phase of(String label) {
			return valueOf(label.toUpperCase(Locale.ROOT));
		}

	}

}
