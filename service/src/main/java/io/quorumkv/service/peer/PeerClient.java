package io.quorumkv.service.peer;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelOption;
import io.quorumkv.service.cluster.ClusterProperties;
import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.PeerClocks;
import io.quorumkv.service.cluster.RingStamp;
import io.quorumkv.service.security.PeerTls;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.HttpClientRequest;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The node's one peer transport: every call to another node goes through one
 * {@link WebClient} over one shared Reactor Netty {@link ConnectionProvider}, bounded
 * keep-alive pools per peer with pool metrics ({@link PeerPools}), on the server's own
 * event loops. Replica reads and writes (hints and read repair included) travel as
 * multiplexed streams ({@link ReplicaStreams}) under a circuit breaker per peer
 * ({@link PeerBreakers}), bounded in flight and under deadlines; the features' other
 * calls (scans, repair, the ring protocol, transfers, Raft) go through {@link #call} and
 * {@link #callMany}, and live with their features. Every call names this node
 * ({@code X-QuorumKV-From}) and carries its ring stamp; an answer from a newer ring is
 * reported ({@link #useRing}), and every answer's {@code X-QuorumKV-Clock} is a sample of
 * the peer's clock offset ({@link PeerClocks}).
 */
public final class PeerClient implements AutoCloseable {

	private final WebClient client;

	private final ConnectionProvider connections;

	private final int maxFrameSize;

	private final Duration replicaTimeout;

	private final EventLoopTimers deadlines;

	private final PeerBreakers breakers;

	private final Map<String, String> lastOutcomes = new ConcurrentHashMap<>();

	private final PeerRing ring = new PeerRing();

	private final Clocks clocks;

	private final ReplicaStreams streams;

	/**
	 * @param stream the replica streams' settings
	 * @param breaker the breaker of each peer
	 * @param peers the peers known at start: each gets the per-peer pool limits
	 * @param loops the event loops to run on: the server's own, so that a call to a peer
	 * needs no thread hop
	 * @param deadlines the timers of the calls' time limiters, armed on the calling loop
	 * @param tls TLS of the calls, or null for plain HTTP
	 */
	public PeerClient(ClusterProperties cluster, StreamProperties stream, BreakerProperties breaker, Node self,
			List<Node> peers, @Nullable String secret, int maxFrameSize, int maxKeySize, LoopResources loops,
			EventLoopTimers deadlines, Clocks clocks, MeterRegistry meters, @Nullable PeerTls tls) {
		this.maxFrameSize = maxFrameSize;
		this.clocks = clocks;
		this.replicaTimeout = cluster.replicaTimeout();
		this.deadlines = deadlines;
		this.connections = PeerPools.of(cluster, peers);
		HttpClient http = HttpClient.create(this.connections)
			.runOn(loops)
			.option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) cluster.connectTimeout().toMillis())
			.keepAlive(true);
		if (tls != null) {
			http = http.secure(tls::configure);
		}
		WebClient.Builder builder = WebClient.builder()
			.clientConnector(new ReactorClientHttpConnector(http))
			.codecs((codecs) -> codecs.defaultCodecs().maxInMemorySize(maxFrameSize))
			.defaultHeader(InternalApi.FROM, self.id())
			.filter(new ClockSampler(clocks));
		if (secret != null) {
			// Without a secret (mutual TLS), the node's certificate is its proof.
			builder.defaultHeader(InternalApi.SECRET, secret);
		}
		this.client = builder.build();
		this.breakers = new PeerBreakers(breaker, meters);
		this.streams = new ReplicaStreams(this.client, deadlines.loops(), this::breaker,
				new StreamLinks(this.ring, clocks, this.lastOutcomes, this::heardFrom),
				new StreamSettings(cluster.maxConcurrentCallsPerPeer(), maxFrameSize, maxKeySize,
						cluster.replicaTimeout(), stream.heartbeat(), stream.idleClose(), stream.maxBackoff()),
				meters);
	}

	/** The streams of replica reads and writes to the peers, over this client. */
	public ReplicaStreams streams() {
		return this.streams;
	}

	/**
	 * Evidence that the peer is up (it called this node, or a stream to it opened): its
	 * circuit breaker closes, and a stream waiting out a backoff toward it may open at
	 * once. A breaker left open after the peer's return would refuse every call to it
	 * without trying, and a request that needs every replica would fail for nothing.
	 */
	public void heardFrom(String peerId) {
		this.breakers.close(peerId);
		this.streams.peerIsUp(peerId);
	}

	/** The clock of the calls' round trips, and where the peers' offsets are kept. */
	public record Clocks(HybridLogicalClock clock, PeerClocks offsets) {
	}

	/**
	 * Stamps every call with this node's ring and reports answers from a newer one
	 * ({@code X-QuorumKV-Ring}, {@link RingStamp}).
	 * @param stamp this node's stamp, null while it has no ring
	 * @param epoch this node's epoch
	 * @param newerRing called with the peer and its stamp when it answers from a newer
	 * epoch
	 */
	public void useRing(Supplier<@Nullable String> stamp, LongSupplier epoch, BiConsumer<Node, RingStamp> newerRing) {
		this.ring.use(stamp, epoch, newerRing);
	}

	/**
	 * A call to the peer, stamped with this node's ring; {@code answer} reads the answer
	 * once a newer ring in it has been reported. A {@code body} is sent as it is
	 * ({@code application/octet-stream}); a {@code responseTimeout} bounds the wait for
	 * the answer's start. Not guarded by the breaker: the caller decides.
	 */
	public <T> Mono<T> call(Node peer, HttpMethod method, String pathAndQuery, byte @Nullable [] body,
			@Nullable Duration responseTimeout, Function<ClientResponse, Mono<T>> answer) {
		return call(peer, method, pathAndQuery, body, responseTimeout, null, null, answer);
	}

	/** {@link #call} with one more header, when {@code headerValue} is not null. */
	public <T> Mono<T> call(Node peer, HttpMethod method, String pathAndQuery, byte @Nullable [] body,
			@Nullable Duration responseTimeout, @Nullable String headerName, @Nullable String headerValue,
			Function<ClientResponse, Mono<T>> answer) {
		return Mono.defer(() -> {
			WebClient.RequestHeadersSpec<?> request = request(peer, method, pathAndQuery, body, responseTimeout);
			if (headerName != null && headerValue != null) {
				request.header(headerName, headerValue);
			}
			return request.exchangeToMono(observing(peer, answer));
		});
	}

	/** {@link #call} of an answer read as a stream. */
	public <T> Flux<T> callMany(Node peer, HttpMethod method, String pathAndQuery, byte @Nullable [] body,
			@Nullable Duration responseTimeout, Function<ClientResponse, Flux<T>> answer) {
		return Flux.defer(() -> request(peer, method, pathAndQuery, body, responseTimeout)
			.exchangeToFlux(observing(peer, answer)));
	}

	/** {@code answer}, once the ring the peer's answer names has been observed. */
	private <R> Function<ClientResponse, R> observing(Node peer, Function<ClientResponse, R> answer) {
		return (response) -> {
			this.ring.observe(peer, response.headers().asHttpHeaders().getFirst(InternalApi.RING));
			return answer.apply(response);
		};
	}

	private WebClient.RequestHeadersSpec<?> request(Node peer, HttpMethod method, String pathAndQuery,
			byte @Nullable [] body, @Nullable Duration responseTimeout) {
		WebClient.RequestBodySpec spec = this.client.method(method).uri(URI.create(peer.base() + pathAndQuery));
		String stamp = this.ring.stamp();
		if (stamp != null) {
			spec.header(InternalApi.RING, stamp);
		}
		if (responseTimeout != null) {
			spec.httpRequest(
					(request) -> request.<HttpClientRequest>getNativeRequest().responseTimeout(responseTimeout));
		}
		return (body != null) ? spec.contentType(MediaType.APPLICATION_OCTET_STREAM).body(PeerAnswers.bytes(body))
				: spec;
	}

	/**
	 * A streamed answer of the peer, as its body's chunks, with backpressure down to the
	 * socket; fails when the peer sends nothing for {@code idle}. Not guarded by the
	 * breaker: a stream is long.
	 */
	public Flux<byte[]> stream(Node peer, String pathAndQuery, Duration idle) {
		return callMany(peer, HttpMethod.GET, pathAndQuery, null, idle,
				(response) -> response.statusCode().is2xxSuccessful() ? response.bodyToFlux(byte[].class)
						: PeerAnswers.<byte[]>failure(response).flux());
	}

	/** The peer's circuit breaker. */
	CircuitBreaker breaker(Node peer) {
		return this.breakers.of(peer);
	}

	/** The state of the peer's circuit breaker ({@code CLOSED}, {@code OPEN}, ...). */
	public CircuitBreaker.State breakerState(Node peer) {
		return this.breakers.of(peer).getState();
	}

	/**
	 * The outcome of the last finished call to the peer ({@code success},
	 * {@code timeout}, {@code breaker-open}, ...), or null before the first one.
	 */
	public @Nullable String lastOutcome(Node peer) {
		return this.lastOutcomes.get(peer.id());
	}

	/** Replica operations in flight to the peer, on all its streams. */
	public int inFlight(Node peer) {
		return this.streams.inFlight(peer);
	}

	/**
	 * The most replica operations in flight to the peer at once, over all its streams.
	 */
	public int maxInFlight() {
		return this.streams.maxInFlight();
	}

	/** The timers of the calls' deadlines, on the calling event loop. */
	public Scheduler timers() {
		return this.deadlines;
	}

	/** The replica timeout: the longest wait for a replica's answer. */
	public Duration replicaTimeout() {
		return this.replicaTimeout;
	}

	/** The largest frame of an answer. */
	public int maxFrameSize() {
		return this.maxFrameSize;
	}

	/**
	 * Ends the replica streams (what they sent is answered within the replica timeout),
	 * then closes the pooled connections; a second call finds none left.
	 */
	@Override
	public void close() {
		this.streams.close();
		this.streams.awaitDrained(this.replicaTimeout);
		this.connections.dispose();
	}

}
