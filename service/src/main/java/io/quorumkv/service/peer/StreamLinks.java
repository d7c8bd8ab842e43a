package io.quorumkv.service.peer;

import java.util.Map;
import java.util.function.Consumer;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.peer.PeerClient.Clocks;
import org.jspecify.annotations.Nullable;

/**
 * What the replica streams tell the {@link PeerClient} and ask of it: its ring stamp and
 * epoch, newer rings, clock samples, the peers reached and each peer's last outcome.
 *
 * @param ring this node's ring stamp, and where newer rings are reported
 * @param clocks this node's clock and the peers' offsets
 * @param lastOutcomes the last outcome toward each peer, by peer id
 * @param heardFrom evidence that a peer (by id) is up
 */
record StreamLinks(PeerRing ring, Clocks clocks, Map<String, String> lastOutcomes,
		Consumer<String> heardFrom) implements ReplicaStreams.Links {

	@Override
	public @Nullable String stamp() {
		return this.ring.stamp();
	}

	@Override
	public long epoch() {
		return this.ring.epoch();
	}

	@Override
	public void newerRing(Node peer, @Nullable String stamp, long epoch) {
		this.ring.newer(peer, stamp, epoch);
	}

	@Override
	public long wallMicros() {
		return this.clocks.clock().wallMicros();
	}

	@Override
	public void clockSample(Node peer, long sentMicros, long receivedMicros, long peerMicros) {
		this.clocks.offsets().sample(peer.base(), sentMicros, receivedMicros, peerMicros);
	}

	@Override
	public void reached(Node peer) {
		this.heardFrom.accept(peer.id());
	}

	@Override
	public void outcome(Node peer, String outcome) {
		this.lastOutcomes.put(peer.id(), outcome);
	}

}
