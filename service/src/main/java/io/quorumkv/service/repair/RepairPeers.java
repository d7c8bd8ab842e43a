package io.quorumkv.service.repair;

import java.time.Duration;
import java.util.List;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.repair.MerkleTree.NodeHash;
import io.quorumkv.service.repair.RepairCodec.NodesRequest;
import io.quorumkv.service.repair.RepairCodec.SessionId;
import io.quorumkv.service.repair.RepairCodec.TreesRequest;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.quorumkv.service.peer.FrameDecoder;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.peer.PeerAnswers;
import io.quorumkv.service.peer.PeerClient;
import io.quorumkv.service.peer.PeerException;
import io.quorumkv.storage.Entry;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpMethod;

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
		return call(peer, path, RepairCodec.trees(request), this.settings.callTimeout(), MAX_HASHES_ANSWER)
			.map(RepairCodec::hashes);
	}

	Mono<List<NodeHash>> nodes(Node peer, NodesRequest request) {
		return call(peer, InternalApi.REPAIR_NODES_PATH, RepairCodec.nodes(request), this.settings.callTimeout(),
				MAX_HASHES_ANSWER)
			.map(RepairCodec::hashes);
	}

	Flux<EntryDigest> digests(Node peer, NodesRequest request) {
		return Flux.defer(() -> {
			FrameDecoder<EntryDigest> decoder = RepairCodec.digests(this.settings.maxKeySize());
			return callMany(peer, InternalApi.REPAIR_DIGESTS_PATH, RepairCodec.nodes(request),
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
		return delete(peer, InternalApi.REPAIR_SESSION_PATH + "?id=" + session.hex(), this.settings.callTimeout());
	}

	Mono<Void> done(Node peer, RepairCodec.Done done, RepairService.Scope scope) {
		String path = InternalApi.REPAIR_DONE_PATH + "?scope=" + scope.name().toLowerCase(java.util.Locale.ROOT);
		return call(peer, path, RepairCodec.done(done), this.settings.callTimeout(), 1024).then();
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

	/**
	 * A repair call ({@code POST} of {@code body} to {@code path}) and its whole answer,
	 * at most {@code maxAnswer} bytes. Not under the replica timeout (a tree build scans
	 * the peer's storage) but under {@code timeout}; refused at once while the peer's
	 * breaker is open.
	 */
	private Mono<byte[]> call(Node peer, String path, byte[] body, Duration timeout, int maxAnswer) {
		return Mono
			.defer(() -> breakerOpen(peer) ? Mono.error(breakerOpenFailure(peer))
					: this.client.call(peer, HttpMethod.POST, path, body, timeout,
							(response) -> response.statusCode().is2xxSuccessful()
									? PeerAnswers.joined(response, maxAnswer) : PeerAnswers.<byte[]>failure(response)))
			.timeout(timeout);
	}

	/**
	 * A repair call whose answer is a stream, emitted in the chunks it arrives in, with
	 * backpressure; a peer that stops sending for {@code timeout} fails it.
	 */
	private Flux<byte[]> callMany(Node peer, String path, byte[] body, Duration timeout) {
		return Flux.defer(
				() -> breakerOpen(peer) ? Flux.error(breakerOpenFailure(peer))
						: this.client.callMany(peer, HttpMethod.POST, path, body, timeout,
								(response) -> response.statusCode().is2xxSuccessful()
										? response.bodyToFlux(byte[].class)
										: PeerAnswers.<byte[]>failure(response).flux()));
	}

	/** A repair call that ends something ({@code DELETE}); its answer body is dropped. */
	private Mono<Void> delete(Node peer, String pathAndQuery, Duration timeout) {
		return this.client.call(peer, HttpMethod.DELETE, pathAndQuery, null, null,
				(response) -> response.statusCode().is2xxSuccessful() ? response.releaseBody()
						: PeerAnswers.<Void>failure(response))
			.timeout(timeout);
	}

	private boolean breakerOpen(Node peer) {
		return this.client.breakerState(peer) == CircuitBreaker.State.OPEN;
	}

	private static PeerException breakerOpenFailure(Node peer) {
		return new PeerException("circuit breaker of " + peer + " is open");
	}

}
