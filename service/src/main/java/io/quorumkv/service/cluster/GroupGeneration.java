package io.quorumkv.service.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Which metadata group a ring belongs to: generation 0 is the group a cluster starts
 * with; each forced reconfiguration (docs/membership.md, "Losing a majority of the
 * voters") starts a new group, one generation later, from one surviving voter's ring. The
 * voters declared lost then are <em>fenced</em>: they stay in the ring (their keys still
 * have to be moved), but are no member of the metadata group until a {@code remove} or
 * {@code replace} takes their place, so that a lost voter that comes back with its old
 * log cannot vote in the new group. A fenced node is known by its id and URL: a
 * replacement takes the dead node's id at another URL and is not fenced.
 *
 * @param number the generation, 0 for a cluster never forced
 * @param fenced the voters of earlier generations declared lost and not yet removed or
 * replaced
 */
public record GroupGeneration(long number, List<RingNode> fenced) {

	/** The generation of a cluster that was never forced. */
	public static final GroupGeneration FIRST = new GroupGeneration(0, List.of());

	public GroupGeneration {
		Objects.requireNonNull(fenced, "fenced");
		fenced = List.copyOf(fenced);
		if (number < 0) {
			throw new IllegalArgumentException("a metadata group generation is at least 0, was " + number);
		}
	}

	/** Whether the node (as the ring lists it) is kept out of the metadata group. */
	public boolean fences(RingNode node) {
		for (RingNode lost : this.fenced) {
			if (lost.id().equals(node.id()) && lost.url().equals(node.url())) {
				return true;
			}
		}
		return false;
	}

	/**
	 * The next generation: {@code lost} fenced besides the fenced nodes of this one that
	 * {@code nodes} still lists at their URL and has not removed.
	 */
	GroupGeneration next(List<RingNode> nodes, List<RingNode> lost) {
		List<RingNode> next = new ArrayList<>();
		for (RingNode node : nodes) {
			boolean stillListed = node.state() != NodeState.REMOVED;
			if (stillListed && (fences(node) || lost.stream().anyMatch((l) -> l.id().equals(node.id())))) {
				next.add(new RingNode(node.id(), node.url(), NodeState.NORMAL));
			}
		}
		return new GroupGeneration(this.number + 1, next);
	}

}
