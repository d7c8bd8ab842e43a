package io.quorumkv.service.membership;

import java.util.ArrayList;
import java.util.List;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingChange;
import io.quorumkv.service.cluster.RingChange.Kind;
import io.quorumkv.service.cluster.RingLayout;

/**
 * Who streams which keys to whom while a change is in its streaming phase: a pure
 * function of the ring, so that every node computes the same plan.
 *
 * <ul>
 * <li>A node <em>gains</em> a key when it is among the key's new owners but not among its
 * old ones; a replacement gains every key of the place it takes.</li>
 * <li>Its <em>sources</em> for that key: the old owners that lose it (the displaced node
 * of a join, the leaving node of a decommission), which hold everything a write quorum
 * placed there; when the node giving up the key is dead (a removal, a replacement), all
 * its surviving old owners, whose copies together hold every acknowledged write.</li>
 * </ul>
 * A target pulls from each of its possible sources one stream of the keys that source
 * owes it, in key order; the source scans its storage once per stream.
 */
final class TransferPlan {

	private final RingLayout layout;

	private final RingChange change;

	TransferPlan(RingLayout layout) {
		this.layout = layout;
		RingChange current = layout.ring().change();
		if (current == null) {
			throw new IllegalStateException("no change under way");
		}
		this.change = current;
	}

	RingChange change() {
		return this.change;
	}

	/** The nodes that may gain keys in this change. */
	List<Node> targets() {
		Ring ring = this.layout.ring();
		return switch (this.change.kind()) {
			case JOIN, REPLACE -> ring.node(this.change.nodeId()).map((n) -> List.of(n.node())).orElse(List.of());
			case DECOMMISSION, REMOVE -> ring.newMembers();
		};
	}

	/** The nodes {@code target} pulls from (some may owe it nothing). */
	List<Node> sources(String target) {
		Ring ring = this.layout.ring();
		List<Node> sources = new ArrayList<>();
		if (this.change.kind() == Kind.DECOMMISSION) {
			ring.node(this.change.nodeId()).ifPresent((n) -> sources.add(n.node()));
			return sources;
		}
		for (Node node : ring.oldMembers()) {
			boolean dead = this.change.declaresDead(node.id())
					|| (this.change.kind() == Kind.REPLACE && node.id().equals(this.change.nodeId()));
			if (!dead && !node.id().equals(target)) {
				sources.add(node);
			}
		}
		return sources;
	}

	/**
	 * Whether {@code source} sends {@code key} to {@code target}. Asked of every entry a
	 * source scans, so it asks the placements about the two nodes
	 * ({@link RingLayout#isOldOwner}) instead of building the owner lists.
	 */
	boolean sends(byte[] key, String source, String target) {
		boolean gains = switch (this.change.kind()) {
			case REPLACE -> target.equals(this.change.nodeId()) && this.layout.isNewOwner(key, target);
			default -> this.layout.isNewOwner(key, target) && !this.layout.isOldOwner(key, target);
		};
		if (!gains || source.equals(target) || !this.layout.isOldOwner(key, source)) {
			return false;
		}
		return switch (this.change.kind()) {
			case JOIN, DECOMMISSION -> !this.layout.isNewOwner(key, source);
			case REMOVE -> !this.change.declaresDead(source);
			case REPLACE -> !source.equals(this.change.nodeId());
		};
	}

}
