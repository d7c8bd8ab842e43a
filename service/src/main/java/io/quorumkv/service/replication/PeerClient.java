package io.quorumkv.service.replication;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
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
import io.netty.channel.ChannelOption;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.config.QuorumKvProperties.ClusterProperties;
import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;
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
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ReactiveHttpOutputMessage;
import org.springframework.http.client.reactive.ClientHttpRequest;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.BodyExtractors;
import org.springframework.web.reactive.function.BodyInserter;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Calls the internal API of the other nodes: the node's one peer transport. Every call
 * (batches, single gets and upserts, hints, read repair, scans) goes through one
 * {@link WebClient} over one shared Reactor Netty {@link ConnectionProvider}: bounded
 * keep-alive pools per peer, with pool metrics, on the server's own event loops. Per peer
 * a circuit breaker (a dead peer fails fast), a bulkhead (bounded calls in flight) and a
 * time limiter guard each call; all are exported as metrics, with a timer per peer,
 * operation and outcome.
 */
public final class PeerClient implements AutoCloseable {

	private static final byte[] NO_BYTES = new byte[0];

	private final WebClient client;

	private final ConnectionProvider connections;

	private final int maxFrameSize;

	private final Duration replicaTimeout;

	private final EventLoopTimers deadlines;

	private final CircuitBreakerRegistry breakers;

	private final BulkheadRegistry bulkheads;

	private final TimeLimiterRegistry limiters;

	private final MeterRegistry meters;

	/** Keyed by a record of three strings, whose hashes the strings cache. */
	private final Map<TimerKey, Timer> timers = new ConcurrentHashMap<>();

	private final Map<String, String> lastOutcomes = new ConcurrentHashMap<>();

	/** Each peer's batch URI, built once rather than parsed per call. */
	private final Map<String, URI> batchUris = new ConcurrentHashMap<>();

	/**
	 * @param peers the peers known at start: each gets the per-peer pool limits
	 * @param loops the event loops to run on: the server's own, so that a call to a peer
	 * needs no thread hop
	 * @param deadlines the timers of the calls' time limiters, armed on the calling loop
	 * @param tls TLS of the calls, or null for plain HTTP
	 */
	PeerClient(ClusterProperties cluster, List<Node> peers, @Nullable String secret, int maxFrameSize,
			LoopResources loops, EventLoopTimers deadlines, MeterRegistry meters, @Nullable PeerTls tls) {
		this.maxFrameSize = maxFrameSize;
		this.replicaTimeout = cluster.replicaTimeout();
		this.meters = meters;
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
			.codecs((codecs) -> codecs.defaultCodecs().maxInMemorySize(maxFrameSize));
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
			.permittedNumberOfCallsInHalfOpenState(cluster.breaker().halfOpenCalls())
			.automaticTransitionFromOpenToHalfOpenEnabled(true)
			.build());
		this.bulkheads = BulkheadRegistry.of(BulkheadConfig.custom()
			.maxConcurrentCalls(cluster.maxConcurrentCallsPerPeer())
			.maxWaitDuration(Duration.ZERO)
			.build());
		this.limiters = TimeLimiterRegistry
			.of(TimeLimiterConfig.custom().timeoutDuration(cluster.replicaTimeout()).cancelRunningFuture(true).build());
		this.breakers.getEventPublisher()
			.onEntryAdded((added) -> closeOnFirstSuccessWhenHalfOpen(added.getAddedEntry()));
		TaggedCircuitBreakerMetrics.ofCircuitBreakerRegistry(this.breakers).bindTo(meters);
		TaggedBulkheadMetrics.ofBulkheadRegistry(this.bulkheads).bindTo(meters);
		TaggedTimeLimiterMetrics.ofTimeLimiterRegistry(this.limiters).bindTo(meters);
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
	 * A half-open breaker closes at its first successful call: that call has just shown
	 * the peer answers. Otherwise it would judge the peer by all of its trial calls, and
	 * those started while the peer was still coming back (refused, timed out) would open
	 * it again right after a client's request had got through, failing the next ones at
	 * once with every replica up.
	 */
	private static void closeOnFirstSuccessWhenHalfOpen(CircuitBreaker breaker) {
		breaker.getEventPublisher().onSuccess((success) -> {
			if (breaker.getState() == CircuitBreaker.State.HALF_OPEN) {
				try {
					breaker.transitionToClosedState();
				}
				catch (IllegalStateException ex) {
					// Another thread's call moved it first: nothing to do.
				}
			}
		});
	}

	/** The peer's kept entry of {@code key}; empty optional when it never saw the key. */
	public Mono<Optional<Entry>> get(Node peer, byte[] key) {
		Mono<Optional<Entry>> call = closedOnCancel((connection) -> this.client.get()
			.uri(URI.create(peer.id() + InternalApi.ENTRY_PATH + "?id=" + InternalApi.encodeKey(key)))
			.httpRequest(connection)
			.exchangeToMono((response) -> readEntry(key, response)));
		return guarded(peer, "get", call);
	}

	/** Sends an entry to the peer, which keeps the greater of it and its own. */
	public Mono<Void> upsert(Node peer, Entry entry) {
		byte[] value = entry.value();
		Mono<Void> call = closedOnCancel((connection) -> this.client.put()
			.uri(URI.create(peer.id() + InternalApi.ENTRY_PATH + "?id=" + InternalApi.encodeKey(entry.key())))
			.httpRequest(connection)
			.header(InternalApi.TIMESTAMP, Long.toString(entry.timestamp()))
			.header(InternalApi.TOMBSTONE, Boolean.toString(value == null))
			.headers((headers) -> {
				if (entry.expires()) {
					headers.set(InternalApi.EXPIRES_AT, Long.toString(entry.expiresAt()));
				}
			})
			.contentType(MediaType.APPLICATION_OCTET_STREAM)
			.body(bytes((value != null) ? value : NO_BYTES))
			.exchangeToMono((response) -> expect(response, HttpStatus.CREATED)));
		return guarded(peer, "upsert", call);
	}

	/**
	 * Sends a batch of replica operations ({@link BatchCodec}) and emits the answer body,
	 * read whole into one array. An answer over the largest batch frame fails the call
	 * instead of being held.
	 */
	public Mono<byte[]> batch(Node peer, byte[] body) {
		URI uri = this.batchUris.computeIfAbsent(peer.id(), (id) -> URI.create(id + InternalApi.BATCH_PATH));
		Mono<byte[]> call = closedOnCancel((connection) -> this.client.post()
			.uri(uri)
			.httpRequest(connection)
			.contentType(MediaType.APPLICATION_OCTET_STREAM)
			.body(bytes(body))
			.exchangeToMono((response) -> (response.statusCode().value() == HttpStatus.OK.value())
					? joined(response, this.maxFrameSize) : failure(response)));
		return guarded(peer, "batch", call);
	}

	/**
	 * The peer's local entries of a range, tombstones included, in key order; streamed
	 * with backpressure. Not guarded by the breaker (a scan is long); a peer that stops
	 * sending for the replica timeout fails it.
	 */
	public Flux<Entry> scan(Node peer, byte[] fromInclusive, byte @Nullable [] toExclusive) {
		String query = "?start=" + InternalApi.encodeKey(fromInclusive)
				+ ((toExclusive != null) ? "&end=" + InternalApi.encodeKey(toExclusive) : "");
		return Flux.defer(() -> {
			FrameDecoder decoder = new FrameDecoder(this.maxFrameSize);
			return this.client.get()
				.uri(URI.create(peer.id() + InternalApi.ENTRIES_PATH + query))
				.httpRequest(
						(request) -> request.<HttpClientRequest>getNativeRequest().responseTimeout(this.replicaTimeout))
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

	/** Calls the peer's bulkhead admits now: its maximum minus the calls in flight. */
	public int availableCalls(Node peer) {
		return this.bulkheads.bulkhead(peer.id()).getMetrics().getAvailableConcurrentCalls();
	}

	/** The most calls the peer's bulkhead admits at once. */
	public int maxCalls(Node peer) {
		return this.bulkheads.bulkhead(peer.id()).getMetrics().getMaxAllowedConcurrentCalls();
	}

	Duration replicaTimeout() {
		return this.replicaTimeout;
	}

	private <T> Mono<T> guarded(Node peer, String operation, Mono<T> call) {
		String id = peer.id();
		CircuitBreaker breaker = this.breakers.circuitBreaker(id);
		Bulkhead bulkhead = this.bulkheads.bulkhead(id);
		TimeLimiter limiter = this.limiters.timeLimiter(id);
		return Mono.defer(() -> {
			long start = System.nanoTime();
			// What Resilience4j's TimeLimiterOperator does (the same limiter, its events
			// and metrics), with the timer on the calling event loop rather than the
			// parallel scheduler (EventLoopTimers).
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
		timer.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
	}

	private static String outcome(Throwable error) {
		return switch (error) {
			case CallNotPermittedException open -> "breaker-open";
			case BulkheadFullException full -> "bulkhead-full";
			case TimeoutException timeout -> "timeout";
			default -> "error";
		};
	}

	/**
	 * A call whose connection is closed when the call is cancelled before it ended (its
	 * time limiter gave up on it): the peer's answer may still come, and the connection
	 * must neither be handed to another call with that answer on its way nor stay taken
	 * until the answer comes. {@code call} builds the exchange and hands the request to
	 * the consumer it is given, which notes its connection.
	 */
	private static <T> Mono<T> closedOnCancel(Function<Consumer<ClientHttpRequest>, Mono<T>> call) {
		return Mono.defer(() -> {
			AtomicReference<@Nullable Connection> connection = new AtomicReference<>();
			return call.apply((request) -> {
				if (request.getNativeRequest() instanceof Connection native_) {
					connection.set(native_);
				}
			}).doOnCancel(() -> {
				Connection taken = connection.get();
				// Only while the call still owns it: once released, the pool may have
				// handed the channel to another call.
				if (taken != null && ChannelOperations.get(taken.channel()) == taken) {
					taken.channel().close();
				}
			});
		});
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

	private Mono<Optional<Entry>> readEntry(byte[] key, ClientResponse response) {
		HttpHeaders headers = response.headers().asHttpHeaders();
		if (response.statusCode().value() == 404 && "true".equals(headers.getFirst(InternalApi.ABSENT))) {
			return response.releaseBody().thenReturn(Optional.empty());
		}
		if (!response.statusCode().is2xxSuccessful()) {
			return failure(response);
		}
		String timestamp = headers.getFirst(InternalApi.TIMESTAMP);
		if (timestamp == null) {
			return response.releaseBody().then(Mono.error(new PeerException("replica answer without a timestamp")));
		}
		boolean tombstone = Boolean.parseBoolean(headers.getFirst(InternalApi.TOMBSTONE));
		String expiry = headers.getFirst(InternalApi.EXPIRES_AT);
		long expiresAt;
		try {
			expiresAt = (expiry != null && !tombstone) ? Long.parseLong(expiry) : Entry.NO_EXPIRY;
		}
		catch (NumberFormatException ex) {
			return response.releaseBody().then(Mono.error(new PeerException("replica answer with a bad expiry")));
		}
		return joined(response, this.maxFrameSize).map(
				(value) -> Optional.of(new Entry(key, tombstone ? null : value, Long.parseLong(timestamp), expiresAt)));
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

	/** Closes the pooled connections; a second call finds none left. */
	@Override
	public void close() {
		this.connections.dispose();
	}

	private record TimerKey(String peer, String operation, String outcome) {
	}

}
