package io.quorumkv.service.replication;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.micrometer.tagged.TaggedBulkheadMetrics;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import io.github.resilience4j.micrometer.tagged.TaggedTimeLimiterMetrics;
import io.github.resilience4j.reactor.bulkhead.operator.BulkheadOperator;
import io.github.resilience4j.reactor.circuitbreaker.operator.CircuitBreakerOperator;
import io.github.resilience4j.timelimiter.TimeLimiter;
import io.github.resilience4j.timelimiter.TimeLimiterConfig;
import io.github.resilience4j.timelimiter.TimeLimiterRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.config.QuorumKvProperties.ClusterProperties;
import io.quorumkv.service.config.QuorumKvProperties.PeerProtocol;
import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Calls the internal API of the other nodes: one {@link WebClient} over one shared,
 * bounded Reactor Netty connection pool for all peers, the batch calls over
 * {@link BatchConnections} (each event loop's own connections; Reactor Netty's client
 * when the peers speak h2c), and per peer a circuit breaker (a dead peer fails fast), a
 * bulkhead (bounded calls in flight) and a time limiter, all exported as metrics with a
 * timer per peer, operation and outcome.
 */
public final class PeerClient implements AutoCloseable {

	private static final byte[] NO_BYTES = new byte[0];

	private final WebClient client;

	private final ConnectionProvider connections;

	private final String secret;

	private final int maxFrameSize;

	private final Duration replicaTimeout;

	private final CircuitBreakerRegistry breakers;

	private final BulkheadRegistry bulkheads;

	private final TimeLimiterRegistry limiters;

	private final MeterRegistry meters;

	/**
	 * Keyed by a record of the three strings, whose hashes the strings cache: a lookup
	 * neither builds a string nor hashes one.
	 */
	private final Map<TimerKey, Timer> timers = new ConcurrentHashMap<>();

	private final Map<String, String> lastOutcomes = new ConcurrentHashMap<>();

	/** The pool's client with the batch call's fixed headers, used without WebClient. */
	private final HttpClient batchClient;

	private final EventLoopTimers deadlines;

	/** The batch calls' own connections; null when the peers speak h2c. */
	private final @Nullable BatchConnections batchConnections;

	/**
	 * The batch call's request to each peer, configured once: each configuration step of
	 * a Reactor Netty client copies its configuration, and a target given as a string is
	 * parsed with a regular expression on every call.
	 */
	private final Map<String, HttpClient.RequestSender> batchSenders = new ConcurrentHashMap<>();

	/**
	 * @param loops the event loops to run on: the server's own, so that a call to a peer
	 * needs no thread hop
	 */
	public PeerClient(ClusterProperties cluster, String secret, int maxBodySize, LoopResources loops,
			MeterRegistry meters) {
		this.secret = secret;
		this.maxFrameSize = InternalApi.maxBatchBody(cluster.batch(), maxBodySize);
		this.replicaTimeout = cluster.replicaTimeout();
		this.meters = meters;
		this.deadlines = new EventLoopTimers(loops.onServer(LoopResources.DEFAULT_NATIVE));
		this.connections = ConnectionProvider.builder("quorumkv-peers")
			.maxConnections(cluster.maxConnectionsPerPeer())
			.pendingAcquireMaxCount(cluster.maxPendingPerPeer())
			.pendingAcquireTimeout(cluster.replicaTimeout())
			.maxIdleTime(Duration.ofSeconds(30))
			.evictInBackground(Duration.ofSeconds(15))
			.metrics(true)
			.build();
		HttpClient http = HttpClient.create(this.connections)
			.runOn(loops)
			.option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) cluster.connectTimeout().toMillis())
			.keepAlive(true)
			.protocol((cluster.peerProtocol() == PeerProtocol.H2C) ? HttpProtocol.H2C : HttpProtocol.HTTP11);
		// No response timeout on the batch calls: the time limiter of guarded() bounds
		// each whole call already, and Reactor Netty's would add and remove a read
		// timeout handler with a timer around every call. The same pool either way (a
		// response timeout is not part of a connection's configuration).
		this.batchConnections = (cluster.peerProtocol() == PeerProtocol.H2C) ? null
				: new BatchConnections(loops, secret, this.maxFrameSize, cluster.connectTimeout(),
						cluster.maxConnectionsPerPeer(), Duration.ofSeconds(30), meters);
		this.batchClient = http.headers((headers) -> headers.set(InternalApi.SECRET, secret)
			.set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_OCTET_STREAM));
		this.client = WebClient.builder()
			// The scans are not guarded: a peer that stops sending fails them here.
			.clientConnector(new ReactorClientHttpConnector(http.responseTimeout(cluster.replicaTimeout())))
			.codecs((codecs) -> codecs.defaultCodecs().maxInMemorySize(this.maxFrameSize))
			.build();
		this.breakers = CircuitBreakerRegistry.of(CircuitBreakerConfig.custom()
			.slidingWindowSize(cluster.breaker().slidingWindow())
			.minimumNumberOfCalls(cluster.breaker().minimumCalls())
			.failureRateThreshold(cluster.breaker().failureRateThreshold())
			.waitDurationInOpenState(cluster.breaker().waitInOpen())
			.permittedNumberOfCallsInHalfOpenState(2)
			.automaticTransitionFromOpenToHalfOpenEnabled(true)
			.build());
		this.bulkheads = BulkheadRegistry.of(BulkheadConfig.custom()
			.maxConcurrentCalls(cluster.maxConcurrentCallsPerPeer())
			.maxWaitDuration(Duration.ZERO)
			.build());
		this.limiters = TimeLimiterRegistry
			.of(TimeLimiterConfig.custom().timeoutDuration(cluster.replicaTimeout()).cancelRunningFuture(true).build());
		TaggedCircuitBreakerMetrics.ofCircuitBreakerRegistry(this.breakers).bindTo(meters);
		TaggedBulkheadMetrics.ofBulkheadRegistry(this.bulkheads).bindTo(meters);
		TaggedTimeLimiterMetrics.ofTimeLimiterRegistry(this.limiters).bindTo(meters);
	}

	/** The peer's kept entry of {@code key}; empty optional when it never saw the key. */
	public Mono<Optional<Entry>> get(Node peer, byte[] key) {
		Mono<Optional<Entry>> call = this.client.get()
			.uri(URI.create(peer.id() + InternalApi.ENTRY_PATH + "?id=" + InternalApi.encodeKey(key)))
			.header(InternalApi.SECRET, this.secret)
			.exchangeToMono((response) -> readEntry(key, response));
		return guarded(peer, "get", call);
	}

	/** Sends an entry to the peer, which keeps the greater of it and its own. */
	public Mono<Void> upsert(Node peer, Entry entry) {
		byte[] value = entry.value();
		Mono<Void> call = this.client.put()
			.uri(URI.create(peer.id() + InternalApi.ENTRY_PATH + "?id=" + InternalApi.encodeKey(entry.key())))
			.header(InternalApi.SECRET, this.secret)
			.header(InternalApi.TIMESTAMP, Long.toString(entry.timestamp()))
			.header(InternalApi.TOMBSTONE, Boolean.toString(value == null))
			.contentType(MediaType.APPLICATION_OCTET_STREAM)
			.bodyValue((value != null) ? value : new byte[0])
			.exchangeToMono((response) -> expect(response, HttpStatus.CREATED));
		return guarded(peer, "upsert", call);
	}

	/**
	 * Sends a batch of replica operations ({@link BatchCodec}) and emits the answer body.
	 * The hottest call between nodes goes out on a connection of the calling event loop
	 * ({@link BatchConnections}), or with h2c through Reactor Netty's client directly: no
	 * WebClient exchange, codecs or body extractors, one copy of the answer. An answer
	 * over the largest batch frame fails the call instead of being held.
	 */
	public Mono<byte[]> batch(Node peer, byte[] body) {
		BatchConnections own = this.batchConnections;
		if (own != null && "http".equals(peer.url().getScheme())) {
			return guarded(peer, "batch", own.call(peer, body));
		}
		Mono<byte[]> call = this.batchSenders
			.computeIfAbsent(peer.id(), (id) -> this.batchClient.post().uri(URI.create(id + InternalApi.BATCH_PATH)))
			.send((request, outbound) -> {
				request.header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(body.length));
				return outbound.send(Mono.fromSupplier(() -> Unpooled.wrappedBuffer(body)));
			})
			.response((response, content) -> {
				int status = response.status().code();
				if (status != HttpStatus.OK.value()) {
					return content.aggregate()
						.asString(StandardCharsets.UTF_8)
						.defaultIfEmpty("")
						.flatMap((text) -> Mono
							.error(new PeerException("replica answered " + status + ": " + text.strip())));
				}
				long[] received = { 0 };
				return ByteBufFlux.fromInbound(content.doOnNext((buffer) -> {
					received[0] += buffer.readableBytes();
					if (received[0] > this.maxFrameSize) {
						throw new PeerException("replica answer exceeds " + this.maxFrameSize + " bytes");
					}
				})).aggregate().asByteArray().defaultIfEmpty(NO_BYTES);
			})
			.single();
		return guarded(peer, "batch", call);
	}

	/**
	 * The peer's local entries of a range, tombstones included, in key order; streamed
	 * with backpressure. Only the call's start is guarded by the breaker.
	 */
	public Flux<Entry> scan(Node peer, byte[] fromInclusive, byte @Nullable [] toExclusive) {
		String query = "?start=" + InternalApi.encodeKey(fromInclusive)
				+ ((toExclusive != null) ? "&end=" + InternalApi.encodeKey(toExclusive) : "");
		return Flux.defer(() -> {
			FrameDecoder decoder = new FrameDecoder(this.maxFrameSize);
			return this.client.get()
				.uri(URI.create(peer.id() + InternalApi.ENTRIES_PATH + query))
				.header(InternalApi.SECRET, this.secret)
				.exchangeToFlux(
						(response) -> response.statusCode().is2xxSuccessful() ? response.bodyToFlux(byte[].class)
							.concatMapIterable(decoder::decode)
							.concatWith(Mono.fromRunnable(() -> {
								if (!decoder.isComplete()) {
									throw new PeerException("replica scan of " + peer + " ended inside a frame");
								}
							})) : response.createError().flux().cast(Entry.class));
		});
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

	/** Calls the peer's bulkhead admits now: its maximum minus the calls in flight. */
	public int availableCalls(Node peer) {
		return this.bulkheads.bulkhead(peer.id()).getMetrics().getAvailableConcurrentCalls();
	}

	/** The most calls the peer's bulkhead admits at once. */
	public int maxCalls(Node peer) {
		return this.bulkheads.bulkhead(peer.id()).getMetrics().getMaxAllowedConcurrentCalls();
	}

	private <T> Mono<T> guarded(Node peer, String operation, Mono<T> call) {
		String id = peer.id();
		CircuitBreaker breaker = this.breakers.circuitBreaker(id);
		Bulkhead bulkhead = this.bulkheads.bulkhead(id);
		TimeLimiter limiter = this.limiters.timeLimiter(id);
		return Mono.defer(() -> {
			long start = System.nanoTime();
			// What Resilience4j's TimeLimiterOperator does (the same limiter, its events
			// and metrics), with the timer on this event loop, not the parallel
			// scheduler.
			return call.timeout(limiter.getTimeLimiterConfig().getTimeoutDuration(), this.deadlines)
				.doOnSuccess((ignored) -> limiter.onSuccess())
				.doOnError(limiter::onError)
				.transformDeferred(BulkheadOperator.of(bulkhead))
				.transformDeferred(CircuitBreakerOperator.of(breaker))
				.doOnSuccess((ignored) -> time(id, operation, "success", start))
				.doOnError((error) -> time(id, operation, outcome(error), start));
		});
	}

	private void time(String peer, String operation, String outcome, long start) {
		this.lastOutcomes.put(peer, outcome);
		Timer timer = this.timers.computeIfAbsent(new TimerKey(peer, operation, outcome),
				(k) -> Timer.builder("quorumkv.replica.requests")
					.description("Calls to peers' internal API by peer, operation and outcome")
					.tag("peer", peer)
					.tag("op", operation)
					.tag("outcome", outcome)
					.publishPercentileHistogram()
					.register(this.meters));
		timer.record(System.nanoTime() - start, java.util.concurrent.TimeUnit.NANOSECONDS);
	}

	private static String outcome(Throwable error) {
		return switch (error) {
			case CallNotPermittedException open -> "breaker-open";
			case BulkheadFullException full -> "bulkhead-full";
			case TimeoutException timeout -> "timeout";
			default -> "error";
		};
	}

	private static Mono<Optional<Entry>> readEntry(byte[] key, ClientResponse response) {
		if (response.statusCode().value() == 404 && response.headers().header(InternalApi.ABSENT).contains("true")) {
			return response.releaseBody().thenReturn(Optional.empty());
		}
		if (!response.statusCode().is2xxSuccessful()) {
			return failure(response);
		}
		long timestamp = Long.parseLong(response.headers().header(InternalApi.TIMESTAMP).getFirst());
		boolean tombstone = Boolean.parseBoolean(response.headers().header(InternalApi.TOMBSTONE).getFirst());
		return response.bodyToMono(byte[].class)
			.defaultIfEmpty(new byte[0])
			.map((value) -> Optional.of(new Entry(key, tombstone ? null : value, timestamp)));
	}

	private static Mono<Void> expect(ClientResponse response, HttpStatus status) {
		return (response.statusCode().value() == status.value()) ? response.releaseBody() : failure(response);
	}

	private static <T> Mono<T> failure(ClientResponse response) {
		return response.bodyToMono(String.class)
			.defaultIfEmpty("")
			.flatMap((body) -> Mono
				.error(new PeerException("replica answered " + response.statusCode().value() + ": " + body.strip())));
	}

	Function<Node, CircuitBreaker> breakers() {
		return (node) -> this.breakers.circuitBreaker(node.id());
	}

	/** Deadline timers on the calling event loop (the node's loops are this client's). */
	EventLoopTimers deadlines() {
		return this.deadlines;
	}

	Duration replicaTimeout() {
		return this.replicaTimeout;
	}

	/** Closes the pooled connections; a second call finds none left. */
	@Override
	public void close() {
		if (this.batchConnections != null) {
			this.batchConnections.close();
		}
		this.connections.dispose();
	}

	private record TimerKey(String peer, String operation, String outcome) {
	}

}
