package io.quorumkv.service.repair;

import java.util.List;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.repair.MerkleTree.NodeHash;
import io.quorumkv.service.repair.RepairCodec.NodesRequest;
import io.quorumkv.service.repair.RepairCodec.SessionId;
import io.quorumkv.service.repair.RepairCodec.TreesRequest;
import io.quorumkv.service.replication.InternalApi;
import io.quorumkv.service.replication.PeerClient;
import io.quorumkv.storage.Entry;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Repair's calls to a peer, all through the node's one peer transport
 * ({@link PeerClient}): the repair routes for trees, nodes, digests and a session's end
 * and outcome, and the replica streams to pull and push entries.
 */
final class RepairPeers {

	private static final int MAX_HASHES_ANSWER = 64 * 1024 * 1024;

	private final PeerClient client;

	private final RepairSettings settings;

	RepairPeers(PeerClient client, RepairSettings settings) {
		this.client = client;
		this.settings = settings;
	}

	Mono<List<NodeHash>> trees(Node peer, TreesRequest request, RepairService.Scope scope) {
		String path = InternalApi.REPAIR_TREES_PATH + "?scope=" + scope.name().toLowerCase(java.util.Locale.ROOT);
		return this.client
			.repair(peer, path, RepairCodec.trees(request), this.settings.callTimeout(), MAX_HASHES_ANSWER)
			.map(RepairCodec::hashes);
	}

	Mono<List<NodeHash>> nodes(Node peer, NodesRequest request) {
		return this.client
			.repair(peer, InternalApi.REPAIR_NODES_PATH, RepairCodec.nodes(request), this.settings.callTimeout(),
					MAX_HASHES_ANSWER)
			.map(RepairCodec::hashes);
	}

	Flux<EntryDigest> digests(Node peer, NodesRequest request) {
		return Flux.defer(() -> {
			DigestDecoder decoder = new DigestDecoder(this.settings.maxKeySize());
			return this.client
				.repairStream(peer, InternalApi.REPAIR_DIGESTS_PATH, RepairCodec.nodes(request),
						this.settings.callTimeout())
				.concatMapIterable(decoder::decode)
				.concatWith(Mono.fromRunnable(() -> {
					if (!decoder.isComplete()) {
						throw new IllegalStateException("digests of " + peer + " ended inside a frame");
					}
				}));
		});
	}

	Mono<Void> end(Node peer, SessionId session) {
		return this.client.repairDelete(peer, InternalApi.REPAIR_SESSION_PATH + "?id=" + session.hex(),
				this.settings.callTimeout());
	}

	Mono<Void> done(Node peer, RepairCodec.Done done, RepairService.Scope scope) {
		String path = InternalApi.REPAIR_DONE_PATH + "?scope=" + scope.name().toLowerCase(java.util.Locale.ROOT);
		return this.client.repair(peer, path, RepairCodec.done(done), this.settings.callTimeout(), 1024).then();
	}

	/**
	 * The peer's entries of {@code keys} (absent ones left out), in key order, read on
	 * the replica streams with at most {@code quorumkv.repair.batch} reads in flight.
	 */
	Flux<Entry> pull(Node peer, List<byte[]> keys) {
		return Flux.fromIterable(keys)
			.flatMapSequential((key) -> this.client.streams()
				.get(peer, key)
				.onErrorMap((error) -> new IllegalStateException("pull from " + peer + " failed: " + error.getMessage(),
						error))
				.flatMap(Mono::justOrEmpty), this.settings.batch());
	}

	/**
	 * Sends {@code entries} to the peer, which keeps the greater versions, on the replica
	 * streams with at most {@code quorumkv.repair.batch} writes in flight; how many.
	 */
	Mono<Long> push(Node peer, List<Entry> entries) {
		return Flux.fromIterable(entries)
			.flatMap((entry) -> this.client.streams()
				.upsert(peer, entry)
				.onErrorMap((error) -> new IllegalStateException("push to " + peer + " failed: " + error.getMessage(),
						error))
				.thenReturn(1L), this.settings.batch())
			.reduce(0L, Long::sum);
	}

}
