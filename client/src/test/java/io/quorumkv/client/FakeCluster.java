package io.quorumkv.client;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import io.netty.handler.codec.http.QueryStringDecoder;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.PlacementStrategy;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingJson;
import io.quorumkv.service.cluster.RingLayout;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * Stand-ins for the nodes of a cluster, for the routing tests, on free loopback ports:
 * each answers {@code GET /v0/ring} with the cluster's ring as the nodes write it
 * ({@code RingJson.writePublic}), {@code PUT} and {@code DELETE} of an entity with 201
 * and 202, a {@code GET} of one with 404, and records which node each key's requests
 * reached. A node can be told to answer 503 (as a node the ring removed does) or be
 * stopped. The nodes can be told to name the ring's epoch on their entity answers
 * ({@code X-QuorumKV-Epoch}, as the nodes do), and their ring reads can be held until
 * released. The expected owners come from the nodes' own placement ({@code RingLayout}).
 */
final class FakeCluster implements AutoCloseable {

	private final List<DisposableServer> servers = new ArrayList<>();

	private final List<URI> urls = new ArrayList<>();

	private final AtomicReference<Ring> ring = new AtomicReference<>();

	/** key -> the index of every node its requests reached, in order. */
	private final Map<String, List<Integer>> hits = new ConcurrentHashMap<>();

	private final Map<Integer, Boolean> unavailable = new ConcurrentHashMap<>();

	private final AtomicInteger ringReads = new AtomicInteger();

	private volatile boolean announceEpoch;

	/** While set, ring reads wait for it to complete before they are answered. */
	private final AtomicReference<Sinks.@Nullable Empty<Void>> ringHold = new AtomicReference<>();

	/**
	 * {@code size} nodes, of which {@code members} are in the ring (epoch 1) under
	 * rendezvous placement with {@code replicationFactor}.
	 */
	FakeCluster(int size, int members, int replicationFactor) {
		for (int i = 0; i < size; i++) {
			int index = i;
			DisposableServer server = HttpServer.create()
				.host("127.0.0.1")
				.port(0)
				.handle((request, response) -> handle(index, request, response))
				.bindNow(Duration.ofSeconds(10));
			this.servers.add(server);
			this.urls.add(URI.create("http://127.0.0.1:" + server.port()));
		}
		List<Node> nodes = new ArrayList<>();
		for (int i = 0; i < members; i++) {
			nodes.add(new Node("node-" + i, this.urls.get(i)));
		}
		this.ring.set(Ring.seed("fake", nodes, replicationFactor, PlacementStrategy.RENDEZVOUS, 128));
	}

	URI url(int node) {
		return this.urls.get(node);
	}

	Ring ring() {
		return this.ring.get();
	}

	/** The ring the nodes answer from now on. */
	void ring(Function<Ring, Ring> change) {
		this.ring.updateAndGet(change::apply);
	}

	List<URI> urls() {
		return List.copyOf(this.urls);
	}

	/** The URLs of the key's replicas under the ring the nodes answer now. */
	List<URI> replicas(String key) {
		return RingLayout.of(this.ring.get())
			.oldOwners(key.getBytes(StandardCharsets.UTF_8))
			.stream()
			.map(Node::url)
			.toList();
	}

	/** The nodes the requests for {@code key} reached, in order, as URLs. */
	List<URI> reached(String key) {
		return this.hits.getOrDefault(key, List.of()).stream().map(this.urls::get).toList();
	}

	int ringReads() {
		return this.ringReads.get();
	}

	/** From now on the entity answers carry the ring's epoch. */
	void announceEpoch() {
		this.announceEpoch = true;
	}

	/** Ring reads wait from now on (they are counted as they arrive) until released. */
	void holdRingReads() {
		this.ringHold.set(Sinks.empty());
	}

	/** The ring reads held are answered, with the ring as it is now. */
	void releaseRingReads() {
		Sinks.Empty<Void> hold = this.ringHold.getAndSet(null);
		if (hold != null) {
			hold.tryEmitEmpty();
		}
	}

	/** From now on the node answers 503 to every request, its ring included. */
	void unavailable(int node) {
		this.unavailable.put(node, true);
	}

	/** Stops the node: connections to its port are refused. */
	void stop(int node) {
		this.servers.get(node).disposeNow(Duration.ofSeconds(10));
	}

	private Mono<Void> handle(int node, HttpServerRequest request, HttpServerResponse response) {
		QueryStringDecoder query = new QueryStringDecoder(request.uri(), StandardCharsets.UTF_8);
		if (this.unavailable.containsKey(node)) {
			return response.status(503).sendString(Mono.just("this node was removed from the cluster")).then();
		}
		if (query.path().equals("/v0/ring")) {
			this.ringReads.incrementAndGet();
			Sinks.Empty<Void> hold = this.ringHold.get();
			Mono<Void> held = (hold != null) ? hold.asMono() : Mono.empty();
			return held.then(Mono.defer(() -> response.status(200)
				.header("Content-Type", "application/json")
				.sendString(Mono.just(RingJson.writePublic(this.ring.get())))
				.then()));
		}
		List<String> ids = query.parameters().get("id");
		if (!query.path().equals("/v0/entity") || ids == null || ids.size() != 1) {
			return response.status(400).sendString(Mono.just("not a single entity")).then();
		}
		this.hits.computeIfAbsent(ids.get(0), (key) -> new CopyOnWriteArrayList<>()).add(node);
		int status = switch (request.method().name()) {
			case "PUT" -> 201;
			case "DELETE" -> 202;
			default -> 404;
		};
		if (this.announceEpoch) {
			response.header("X-QuorumKV-Epoch", Long.toString(this.ring.get().epoch()));
		}
		return request.receive().aggregate().then(Mono.defer(() -> response.status(status).send().then()));
	}

	@Override
	public void close() {
		for (DisposableServer server : this.servers) {
			if (!server.isDisposed()) {
				server.disposeNow(Duration.ofSeconds(10));
			}
		}
	}

}
