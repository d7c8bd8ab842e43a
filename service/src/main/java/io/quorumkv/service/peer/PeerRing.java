package io.quorumkv.service.peer;

import java.util.function.BiConsumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.RingStamp;
import org.jspecify.annotations.Nullable;

/**
 * This node's ring as the peer transport sends it ({@code X-QuorumKV-Ring},
 * {@link RingStamp}) and the answers from a newer one it reports.
 */
final class PeerRing {

	/** This node's ring stamp, sent with every call; null: none. */
	private volatile Supplier<@Nullable String> stamp = () -> null;

	private volatile LongSupplier epoch = () -> 0;

	/** Told when a peer answers from a newer epoch than this node's. */
	private volatile BiConsumer<Node, RingStamp> newerRing = (peer, ring) -> {
	};

	void use(Supplier<@Nullable String> stamp, LongSupplier epoch, BiConsumer<Node, RingStamp> newerRing) {
		this.stamp = stamp;
		this.epoch = epoch;
		this.newerRing = newerRing;
	}

	@Nullable String stamp() {
		return this.stamp.get();
	}

	long epoch() {
		return this.epoch.getAsLong();
	}

	/** Reports an answer's ring header if newer; cheap when the epochs are equal. */
	void observe(Node peer, @Nullable String header) {
		if (header != null && RingStamp.epochOf(header) > epoch()) {
			RingStamp ring = RingStamp.parse(header);
			if (ring != null) {
				this.newerRing.accept(peer, ring);
			}
		}
	}

	/**
	 * Reports a newer ring a stream's answer named: by its stamp, or by its epoch alone
	 * (then in this node's cluster, learned from the peer).
	 */
	void newer(Node peer, @Nullable String stamp, long epoch) {
		RingStamp ring = (stamp != null) ? RingStamp.parse(stamp) : null;
		if (ring == null) {
			RingStamp mine = RingStamp.parse(stamp());
			if (mine == null) {
				return;
			}
			ring = new RingStamp(epoch, mine.clusterId(), peer.id(), peer.base());
		}
		this.newerRing.accept(peer, ring);
	}

}
