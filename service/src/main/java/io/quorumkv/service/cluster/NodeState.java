package io.quorumkv.service.cluster;

import java.util.Locale;

/**
 * A node's state in the ring. A key's old owners are placed over the {@link #NORMAL} and
 * {@link #LEAVING} nodes, its new owners over the {@link #NORMAL} and {@link #JOINING}
 * ones; outside a change every node is normal (or removed).
 */
public enum NodeState {

	/** Being added: receives writes and streamed data, serves no reads yet. */
	JOINING,
	/** A full member. */
	NORMAL,
	/** Being taken out: still an old owner until its ranges are handed over. */
	LEAVING,
	/** Gone; kept in the ring so that it is recognised and refused if it comes back. */
	REMOVED;

	/** The state's name in JSON and in the operator views: {@code joining}, ... */
	public String label() {
		return name().toLowerCase(Locale.ROOT);
	}

	static NodeState of(String label) {
		return valueOf(label.toUpperCase(Locale.ROOT));
	}

}
