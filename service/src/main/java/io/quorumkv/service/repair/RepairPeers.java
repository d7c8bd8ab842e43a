package io.quorumkv.service.repair;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.repair.MerkleTree.NodeHash;
import io.quorumkv.service.repair.RepairCodec.NodesRequest;
import io.quorumkv.service.repair.RepairCodec.SessionId;
import io.quorumkv.service.repair.RepairCodec.TreesRequest;
import io.quorumkv.service.replication.BatchCodec;
import io.quorumkv.service.replication.BatchCodec.Operation;
import io.quorumkv.service.replication.BatchCodec.Result;
import io.quorumkv.service.replication.InternalApi;
import io.quorumkv.service.replication.PeerClient;
import io.quorumkv.storage.Entry;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Repair's calls to a peer, all through the node's one peer transport
 * ({@link PeerClient}): the repair routes for trees, nodes, digests and a session's end
 * and outcome, and the ordinary batch route to pull and push entries (a batch call per
 * {@code quorumkv.repair.batch} entries, within the batch size limit).
 */
final class RepairPeers {

	private static final int MAX_HASHES_ANSWER = 64 * 1024 * 1024;

	private final PeerClient client;

	private final RepairSettings settings;

	private final int maxBatchBytes;

	RepairPeers(PeerClient client, RepairSettings settings, int maxBatchBytes) {
		this.client = client;
		this.settings = settings;
		this.maxBatchBytes = maxBatchBytes;
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

	/** The peer's entries of {@code keys} (absent ones left out), in batch calls. */
	Flux<Entry> pull(Node peer, List<byte[]> keys) {
		return Flux.fromIterable(batches(keys.stream().map(Operation::get).toList()))
			.concatMap((operations) -> this.client.batch(peer, BatchCodec.encodeRequest(operations))
				.flatMapMany((answer) -> Flux
					.fromIterable(BatchCodec.decodeResponse(answer, operations, this.settings.maxKeySize())))
				.index()
				.concatMap((result) -> answerOf(peer, operations.get(result.getT1().intValue()), result.getT2())));
	}

	private Mono<Entry> answerOf(Node peer, Operation operation, Result result) {
		if (result.isFailure()) {
			return Mono.error(new IllegalStateException("pull from " + peer + " failed: " + result.failure()));
		}
		if (result.isRetryAlone()) {
			return this.client.get(peer, operation.key()).flatMap(Mono::justOrEmpty);
		}
		return Mono.justOrEmpty(result.entry());
	}

	/** Sends {@code entries} to the peer, which keeps the greater versions; how many. */
	Mono<Long> push(Node peer, List<Entry> entries) {
		return Flux.fromIterable(batches(entries.stream().map(Operation::upsert).toList()))
			.concatMap((operations) -> this.client.batch(peer, BatchCodec.encodeRequest(operations))
				.map((answer) -> BatchCodec.decodeResponse(answer, operations, this.settings.maxKeySize()))
				.flatMap((results) -> {
					Optional<Result> failed = results.stream().filter(Result::isFailure).findFirst();
					return failed.isPresent()
							? Mono.error(
									new IllegalStateException("push to " + peer + " failed: " + failed.get().failure()))
							: Mono.just((long) results.size());
				}))
			.reduce(0L, Long::sum);
	}

	/** Operations cut into batches of at most {@code batch} and the batch byte limit. */
	private List<List<Operation>> batches(List<Operation> operations) {
		List<List<Operation>> batches = new ArrayList<>();
		List<Operation> current = new ArrayList<>();
		long bytes = 0;
		for (Operation operation : operations) {
			int size = operation.encodedSize();
			if (!current.isEmpty() && (current.size() >= this.settings.batch() || bytes + size > this.maxBatchBytes)) {
				batches.add(current);
				current = new ArrayList<>();
				bytes = 0;
			}
			current.add(operation);
			bytes += size;
		}
		if (!current.isEmpty()) {
			batches.add(current);
		}
		return batches;
	}

}
