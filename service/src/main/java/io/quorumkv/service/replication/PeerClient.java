package io.quorumkv.service.replication;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.netty.channel.ChannelOption;
import io.quorumkv.service.peer.EventLoopTimers;
import io.quorumkv.service.peer.FrameDecoder;
import io.quorumkv.service.peer.PeerException;
import io.quorumkv.service.peer.ReplicaStreams;
import io.quorumkv.service.peer.StaleRingException;
import io.quorumkv.service.cluster.ClockSkewException;
import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.PeerClocks;
import io.quorumkv.service.cluster.RingStamp;
import io.quorumkv.service.config.QuorumKvProperties.ClusterProperties;
import io.quorumkv.service.config.QuorumKvProperties.StreamProperties;
import io.quorumkv.service.security.PeerTls;
import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;
import reactor.netty.channel.ChannelOperations;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.HttpClientRequest;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ReactiveHttpOutputMessage;
import org.springframework.http.client.reactive.ClientHttpRequest;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.BodyExtractors;
import org.springframework.web.reactive.function.BodyInserter;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Calls the internal API of the other nodes: the node's one peer transport. Every call
 * (batches, single gets and upserts, hints, read repair, scans) goes through one
 * {@link WebClient} over one shared Reactor Netty {@link ConnectionProvider}: bounded
 * keep-alive pools per peer, with pool metrics, on the server's own event loops. Per peer
 * a circuit breaker (a dead peer fails fast), a bulkhead (bounded calls in flight) and a
 * time limiter guard each call; all are exported as metrics, with a timer per peer,
 * operation and outcome. Every call names this node ({@code X-QuorumKV-From}), and every
 * answer's {@code X-QuorumKV-Clock} is a sample of the peer's clock offset
 * ({@link PeerClocks}). A peer's refusal of a timestamp too far ahead of its clock fails
 * the call with a {@link ClockSkewException}, which does not count against its breaker:
 * the peer is well.
 */
public final class PeerClient implements AutoCloseable {

	private static final byte[] NO_BYTES = new byte[0];

	private final WebClient client;

	private final ConnectionProvider connections;

	private final int maxFrameSize;

	private final Duration replicaTimeout;

	private final EventLoopTimers deadlines;

	private final CircuitBreakerRegistry breakers;

	private final Map<String, String> lastOutcomes = new ConcurrentHashMap<>();

	/** This node's ring stamp ({@link RingStamp}), sent with every call; null: none. */
	private volatile Supplier<@Nullable String> stamp = () -> null;

	/** Told when a peer answers from a newer epoch than this node's. */
	private volatile BiConsumer<Node, RingStamp> newerRing = (peer, ring) -> {
	};

	private volatile LongSupplier epoch = () -> 0;

	private final Clocks clocks;

	private final ReplicaStreams streams;

	/**
	 * @param peers the peers known at start: each gets the per-peer pool limits
	 * @param loops the event loops to run on: the server's own, so that a call to a peer
	 * needs no thread hop
	 * @param deadlines the timers of the calls' time limiters, armed on the calling loop
	 * @param tls TLS of the calls, or null for plain HTTP
	 */
	PeerClient(ClusterProperties cluster, Node self, List<Node> peers, @Nullable String secret, int maxFrameSize,
			int maxKeySize, LoopResources loops, EventLoopTimers deadlines, Clocks clocks, MeterRegistry meters,
			@Nullable PeerTls tls) {
		this.maxFrameSize = maxFrameSize;
		this.clocks = clocks;
		this.replicaTimeout = cluster.replicaTimeout();
		this.deadlines = deadlines;
		this.connections = connectionProvider(cluster, peers);
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
			.filter(clockSampler(clocks));
		if (secret != null) {
			// Without a secret (mutual TLS), the node's certificate is its proof.
			builder.defaultHeader(InternalApi.SECRET, secret);
		}
		this.client = builder.build();
		this.breakers = CircuitBreakerRegistry.of(CircuitBreakerConfig.custom()
			.slidingWindowSize(cluster.breaker().slidingWindow())
			.minimumNumberOfCalls(cluster.breaker().minimumCalls())
			.failureRateThreshold(cluster.breaker().failureRateThreshold())
			.waitDurationInOpenState(cluster.breaker().waitInOpen())
			// A refusal for an older ring or of a timestamp too far ahead says the peer
			// is
			// up; it is no reason to open (one call, as each replaces the list).
			.ignoreExceptions(StaleRingException.class, ClockSkewException.class)
			.permittedNumberOfCallsInHalfOpenState(cluster.breaker().halfOpenCalls())
			.automaticTransitionFromOpenToHalfOpenEnabled(true)
			.build());
		TaggedCircuitBreakerMetrics.ofCircuitBreakerRegistry(this.breakers).bindTo(meters);
		StreamProperties stream = cluster.stream();
		this.streams = new ReplicaStreams(this.client, deadlines.loops(), this::breaker, new StreamLinks(),
				new ReplicaStreams.Settings(cluster.maxConcurrentCallsPerPeer(), maxFrameSize, maxKeySize,
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
		this.breakers.find(peerId).ifPresent((breaker) -> {
			CircuitBreaker.State state = breaker.getState();
			if (state == CircuitBreaker.State.OPEN || state == CircuitBreaker.State.HALF_OPEN) {
				try {
					breaker.transitionToClosedState();
				}
				catch (IllegalStateException ex) {
					// Another thread moved it first.
				}
			}
		});
		this.streams.peerIsUp(peerId);
	}

	/** What the replica streams tell this client and ask of it. */
	private final class StreamLinks implements ReplicaStreams.Links {

		@Override
		public @Nullable String stamp() {
			return PeerClient.this.stamp.get();
		}

		@Override
		public long epoch() {
			return PeerClient.this.epoch.getAsLong();
		}

		@Override
		public void newerRing(Node peer, @Nullable String stamp, long epoch) {
			RingStamp ring = (stamp != null) ? RingStamp.parse(stamp) : null;
			if (ring == null) {
				RingStamp mine = RingStamp.parse(PeerClient.this.stamp.get());
				if (mine == null) {
					return;
				}
				ring = new RingStamp(epoch, mine.clusterId(), peer.id(), peer.base());
			}
			PeerClient.this.newerRing.accept(peer, ring);
		}

		@Override
		public long wallMicros() {
			return PeerClient.this.clocks.clock().wallMicros();
		}

		@Override
		public void clockSample(Node peer, long sentMicros, long receivedMicros, long peerMicros) {
			PeerClient.this.clocks.offsets().sample(peer.base(), sentMicros, receivedMicros, peerMicros);
		}

		@Override
		public void reached(Node peer) {
			heardFrom(peer.id());
		}

		@Override
		public void outcome(Node peer, String outcome) {
			PeerClient.this.lastOutcomes.put(peer.id(), outcome);
		}

	}

	/** The clock of the calls' round trips, and where the peers' offsets are kept. */
	record Clocks(HybridLogicalClock clock, PeerClocks offsets) {
	}

	/**
	 * Samples the peer's clock offset from each answer: sent and received on this node's
	 * wall clock, the peer's wall clock from {@link InternalApi#CLOCK}.
	 */
	private static ExchangeFilterFunction clockSampler(Clocks clocks) {
		return (ClientRequest request, ExchangeFunction next) -> Mono.defer(() -> {
			long sent = clocks.clock().wallMicros();
			return next.exchange(request).doOnNext((response) -> {
				String peerClock = response.headers().asHttpHeaders().getFirst(InternalApi.CLOCK);
				if (peerClock != null) {
					try {
						URI url = request.url();
						clocks.offsets()
							.sample(url.getScheme() + "://" + url.getHost() + ":" + url.getPort(), sent,
									clocks.clock().wallMicros(), Long.parseLong(peerClock));
					}
					catch (NumberFormatException ex) {
						// not a sample
					}
				}
			});
		});
	}

	/**
	 * One pool per peer (Reactor Netty keeps a pool per remote address), each bounded in
	 * connections and in callers waiting for one, with metrics. The known peers are named
	 * with {@code forRemoteHost}; a host given that way takes none of the builder's
	 * defaults, so each setting is repeated for it.
	 */
	private static ConnectionProvider connectionProvider(ClusterProperties cluster, List<Node> peers) {
		ConnectionProvider.Builder builder = ConnectionProvider.builder("quorumkv-peers")
			.maxConnections(cluster.maxConnectionsPerPeer())
			.pendingAcquireMaxCount(cluster.maxPendingPerPeer())
			.pendingAcquireTimeout(cluster.replicaTimeout())
			.maxIdleTime(Duration.ofSeconds(30))
			.evictInBackground(Duration.ofSeconds(15))
			.metrics(true);
		for (Node peer : peers) {
			builder.forRemoteHost(peer.address(),
					(spec) -> spec.maxConnections(cluster.maxConnectionsPerPeer())
						.pendingAcquireMaxCount(cluster.maxPendingPerPeer())
						.pendingAcquireTimeout(cluster.replicaTimeout())
						.maxIdleTime(Duration.ofSeconds(30))
						.evictInBackground(Duration.ofSeconds(15))
						.metrics(true));
		}
		return builder.build();
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
		this.stamp = stamp;
		this.epoch = epoch;
		this.newerRing = newerRing;
	}

	private <S extends WebClient.RequestHeadersSpec<?>> S stamped(S spec) {
		String value = this.stamp.get();
		if (value != null) {
			spec.header(InternalApi.RING, value);
		}
		return spec;
	}

	/** Reports an answer from a newer ring; cheap when the epochs are equal. */
	private void observe(Node peer, ClientResponse response) {
		String header = response.headers().asHttpHeaders().getFirst(InternalApi.RING);
		if (header != null && RingStamp.epochOf(header) > this.epoch.getAsLong()) {
			RingStamp ring = RingStamp.parse(header);
			if (ring != null) {
				this.newerRing.accept(peer, ring);
			}
		}
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
	public Flux<Entry> scan(Node peer, byte[] fromInclusive, byte @Nullable [] toExclusive, int limit) {
		String query = "?start=" + InternalApi.encodeKey(fromInclusive)
				+ ((toExclusive != null) ? "&end=" + InternalApi.encodeKey(toExclusive) : "") + "&limit=" + limit;
		return Flux.defer(() -> {
			FrameDecoder decoder = new FrameDecoder(this.maxFrameSize);
			return readToEndOnCancel(stream(peer, InternalApi.ENTRIES_PATH + query, this.replicaTimeout),
					this.maxFrameSize)
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

	/**
	 * A repair call ({@code POST} of {@code body} to {@code path}) and its whole answer,
	 * at most {@code maxAnswer} bytes. Not under the replica timeout (a tree build scans
	 * the peer's storage) but under {@code timeout}; refused at once while the peer's
	 * breaker is open.
	 */
	public Mono<byte[]> repair(Node peer, String path, byte[] body, Duration timeout, int maxAnswer) {
		return Mono.defer(() -> (breakerState(peer) == CircuitBreaker.State.OPEN)
				? Mono.error(new PeerException("circuit breaker of " + peer + " is open"))
				: stamped(this.client.post()
					.uri(URI.create(peer.base() + path))
					.httpRequest((request) -> request.<HttpClientRequest>getNativeRequest().responseTimeout(timeout))
					.contentType(MediaType.APPLICATION_OCTET_STREAM)).body(bytes(body)).exchangeToMono((response) -> {
						observe(peer, response);
						return response.statusCode().is2xxSuccessful() ? joined(response, maxAnswer)
								: failure(response);
					}))
			.timeout(timeout);
	}

	/**
	 * A repair call whose answer is a stream, emitted in the chunks it arrives in, with
	 * backpressure; a peer that stops sending for {@code timeout} fails it.
	 */
	public Flux<byte[]> repairStream(Node peer, String path, byte[] body, Duration timeout) {
		return Flux.defer(() -> (breakerState(peer) == CircuitBreaker.State.OPEN)
				? Flux.error(new PeerException("circuit breaker of " + peer + " is open"))
				: stamped(this.client.post()
					.uri(URI.create(peer.base() + path))
					.httpRequest((request) -> request.<HttpClientRequest>getNativeRequest().responseTimeout(timeout))
					.contentType(MediaType.APPLICATION_OCTET_STREAM)).body(bytes(body)).exchangeToFlux((response) -> {
						observe(peer, response);
						return response.statusCode().is2xxSuccessful() ? response.bodyToFlux(byte[].class)
								: failure(response).flux().cast(byte[].class);
					}));
	}

	/** A repair call that ends something ({@code DELETE}); its answer body is dropped. */
	public Mono<Void> repairDelete(Node peer, String pathAndQuery, Duration timeout) {
		return Mono.defer(() -> stamped(this.client.delete().uri(URI.create(peer.base() + pathAndQuery)))
			.exchangeToMono((response) -> {
				observe(peer, response);
				return response.statusCode().is2xxSuccessful() ? response.releaseBody() : failure(response);
			})).timeout(timeout);
	}

	/**
	 * A streamed answer of the peer, as its body's chunks, with backpressure down to the
	 * socket; fails when the peer sends nothing for {@code idle}. Not guarded by the
	 * breaker: a stream is long.
	 */
	public Flux<byte[]> stream(Node peer, String pathAndQuery, Duration idle) {
		return Flux.defer(() -> stamped(this.client.get()
			.uri(URI.create(peer.base() + pathAndQuery))
			.httpRequest((request) -> request.<HttpClientRequest>getNativeRequest().responseTimeout(idle)))
			.exchangeToFlux((response) -> {
				observe(peer, response);
				return response.statusCode().is2xxSuccessful() ? response.bodyToFlux(byte[].class)
						: failure(response).flux().cast(byte[].class);
			}));
	}

	/**
	 * A call of the ring protocol ({@code /internal/v0/ring...}): the answer's status and
	 * text whatever the status, so that a refusal can be read; a transport failure or
	 * silence for {@code timeout} fails it. Not guarded by the breaker: an agreement must
	 * reach a peer the data path has given up on for a while.
	 */
	public Mono<RingReply> ringCall(Node peer, HttpMethod method, String pathAndQuery, @Nullable String json,
			Duration timeout) {
		return Mono.defer(() -> {
			WebClient.RequestBodySpec spec = stamped(
					this.client.method(method).uri(URI.create(peer.base() + pathAndQuery)));
			WebClient.RequestHeadersSpec<?> request = (json != null)
					? spec.contentType(MediaType.APPLICATION_JSON).body(bytes(json.getBytes(StandardCharsets.UTF_8)))
					: spec;
			return request.exchangeToMono((response) -> {
				observe(peer, response);
				return response.bodyToMono(String.class)
					.defaultIfEmpty("")
					.map((body) -> new RingReply(response.statusCode().value(), body));
			});
		}).timeout(timeout, this.deadlines);
	}

	/**
	 * A call of the metadata layer's Raft RPC ({@code POST /internal/v0/raft/...}): a
	 * serialized request, and the answer's status and bytes whatever the status (a
	 * refusal's bytes are its reason as text); at most {@code maxAnswer} bytes. A
	 * transport failure or silence for {@code timeout} fails it. Not guarded by the
	 * breaker: Raft has its own retries and must reach a peer the data path gave up on.
	 */
	public Mono<BinaryReply> raftCall(Node peer, String path, byte[] body, Duration timeout, int maxAnswer) {
		return Mono.defer(() -> stamped(
				this.client.post().uri(URI.create(peer.base() + path)).contentType(MediaType.APPLICATION_OCTET_STREAM))
			.body(bytes(body))
			.exchangeToMono((response) -> {
				observe(peer, response);
				int status = response.statusCode().value();
				return joined(response, maxAnswer).map((bytes) -> new BinaryReply(status, bytes));
			})).timeout(timeout, this.deadlines);
	}

	/**
	 * A binary answer.
	 *
	 * @param status the HTTP status
	 * @param body the answer's bytes
	 */
	public record BinaryReply(int status, byte[] body) {

		public boolean ok() {
			return this.status / 100 == 2;
		}

	}

	/**
	 * An answer of the ring protocol.
	 *
	 * @param status the HTTP status
	 * @param body the answer's text (JSON on success, a reason on refusal)
	 */
	public record RingReply(int status, String body) {

		public boolean ok() {
			return this.status / 100 == 2;
		}

	}

	/** The peer's circuit breaker. */
	CircuitBreaker breaker(Node peer) {
		return this.breakers.circuitBreaker(peer.id());
	}

	/** The state of the peer's circuit breaker ({@code CLOSED}, {@code OPEN}, ...). */
	public CircuitBreaker.State breakerState(Node peer) {
		return this.breakers.circuitBreaker(peer.id()).getState();
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

	Duration replicaTimeout() {
		return this.replicaTimeout;
	}

	/** A request body of bytes already in memory: wrapped, not copied or encoded. */
	private static BodyInserter<byte[], ReactiveHttpOutputMessage> bytes(byte[] body) {
		return (message, context) -> {
			message.getHeaders().setContentLength(body.length);
			return message.writeWith(Mono.just(DefaultDataBufferFactory.sharedInstance.wrap(body)));
		};
	}

	/** The whole answer body as one array, failing past {@code maxSize} bytes. */
	private static Mono<byte[]> joined(ClientResponse response, int maxSize) {
		return DataBufferUtils.join(response.body(BodyExtractors.toDataBuffers()), maxSize)
			.map(PeerClient::toBytes)
			.defaultIfEmpty(NO_BYTES)
			.onErrorMap(DataBufferLimitException.class,
					(ex) -> new PeerException("replica answer exceeds " + maxSize + " bytes"));
	}

	private static byte[] toBytes(DataBuffer buffer) {
		try {
			byte[] bytes = new byte[buffer.readableByteCount()];
			buffer.read(bytes);
			return bytes;
		}
		finally {
			DataBufferUtils.release(buffer);
		}
	}

	private static <T> Mono<T> failure(ClientResponse response) {
		int status = response.statusCode().value();
		HttpHeaders headers = response.headers().asHttpHeaders();
		boolean stale = status == HttpStatus.CONFLICT.value() && headers.getFirst(InternalApi.RING) != null;
		boolean skew = InternalApi.REFUSED_CLOCK_SKEW.equals(headers.getFirst(InternalApi.REFUSED));
		return response.bodyToMono(String.class).defaultIfEmpty("").flatMap((body) -> {
			String message = "replica answered " + status + ": " + body.strip();
			return Mono.error(stale ? new StaleRingException(message)
					: skew ? new ClockSkewException(message, 0) : new PeerException(message));
		});
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
