package io.quorumkv.service.replication;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.peer.FrameDecoder;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.peer.PeerClient;
import io.quorumkv.service.peer.PeerException;
import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * One page of a range read from a peer ({@code GET /internal/v0/entries}), through the
 * node's one peer transport.
 */
final class ReplicaScans {

	private ReplicaScans() {
	}

	/**
	 * At most {@code limit} of the peer's local entries of a range, tombstones included,
	 * in key order (one page of a range read); streamed with backpressure. Not guarded by
	 * the breaker (a scan is long); a peer that stops sending for the replica timeout
	 * fails it. Cancelled before its end, the page is still read to its end and dropped,
	 * up to the largest frame's size more: its connection then goes back to the pool
	 * rather than being closed with the answer half read (a short scan cancels its pages
	 * as a rule). A longer rest (a node of a version before the limit sends the whole
	 * range) closes it.
	 */
	static Flux<Entry> page(PeerClient peers, Node peer, byte[] fromInclusive, byte @Nullable [] toExclusive,
			int limit) {
		String query = "?start=" + InternalApi.encodeKey(fromInclusive)
				+ ((toExclusive != null) ? "&end=" + InternalApi.encodeKey(toExclusive) : "") + "&limit=" + limit;
		int maxFrameSize = peers.maxFrameSize();
		return Flux.defer(() -> {
			FrameDecoder<Entry> decoder = FrameDecoder.entries(maxFrameSize);
			return readToEndOnCancel(peers.stream(peer, InternalApi.ENTRIES_PATH + query, peers.replicaTimeout()),
					maxFrameSize)
				.concatMapIterable(decoder::decode)
				.concatWith(Mono.fromRunnable(() -> {
					if (!decoder.isComplete()) {
						throw new PeerException("replica scan of " + peer + " ended inside a frame");
					}
				}));
		});
	}

	/**
	 * {@code source} with backpressure, but read to its end and dropped when cancelled (a
	 * failure then quietly), unless more than {@code maxDrained} bytes are left: then
	 * cancelled after those.
	 */
	private static Flux<byte[]> readToEndOnCancel(Flux<byte[]> source, int maxDrained) {
		return Flux.create((sink) -> source.subscribe(new BaseSubscriber<byte[]>() {

			private long drained;

			@Override
			protected void hookOnSubscribe(Subscription subscription) {
				// Demand is the sink's, passed on from here: no request lost before.
				sink.onRequest(this::request);
				sink.onCancel(this::requestUnbounded);
			}

			@Override
			protected void hookOnNext(byte[] chunk) {
				if (!sink.isCancelled()) {
					sink.next(chunk);
				}
				else {
					this.drained += chunk.length;
					if (this.drained > maxDrained) {
						dispose();
					}
				}
			}

			@Override
			protected void hookOnComplete() {
				sink.complete();
			}

			@Override
			protected void hookOnError(Throwable error) {
				if (!sink.isCancelled()) {
					sink.error(error);
				}
			}

		}));
	}

}
