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
import io.quorumkv.service.peer.EventLoopTimers;
import io.quorumkv.service.peer.FrameDecoder;
import io.quorumkv.service.peer.PeerException;
import io.quorumkv.service.peer.StaleRingException;
import io.quorumkv.service.cluster.ClockSkewException;
import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.PeerClocks;
import io.quorumkv.service.cluster.RingStamp;
import io.quorumkv.service.config.QuorumKvProperties.ClusterProperties;
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

	private final BulkheadRegistry bulkheads;

	private final TimeLimiterRegistry limiters;

	private final MeterRegistry meters;

	/** Keyed by a record of three strings, whose hashes the strings cache. */
	private final Map<TimerKey, Timer> timers = new ConcurrentHashMap<>();

	private final Map<String, String> lastOutcomes = new ConcurrentHashMap<>();

	/** Each peer's batch URI, built once rather than parsed per call. */
	private final Map<String, URI> batchUris = new ConcurrentHashMap<>();

	/** This node's ring stamp ({@link RingStamp}), sent with every call; null: none. */
	private volatile Supplier<@Nullable String> stamp = () -> null;

	/** Told when a peer answers from a newer epoch than this node's. */
	private volatile BiConsumer<Node, RingStamp> newerRing = (peer, ring) -> {
	};

	private volatile LongSupplier epoch = () -> 0;

	/**
	 * @param peers the peers known at start: each gets the per-peer pool limits
	 * @param loops the event loops to run on: the server's own, so that a call to a peer
	 * needs no thread hop
	 * @param deadlines the timers of the calls' time limiters, armed on the calling loop
	 * @param tls TLS of the calls, or null for plain HTTP
	 */
	PeerClient(ClusterProperties cluster, Node self, List<Node> peers, @Nullable String secret, int maxFrameSize,
			LoopResources loops, EventLoopTimers deadlines, Clocks clocks, MeterRegistry meters,
			@Nullable PeerTls tls) {
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
		Mono<Optional<Entry>> call = closedOnCancel((connection) -> stamped(this.client.get()
			.uri(URI.create(peer.base() + InternalApi.ENTRY_PATH + "?id=" + InternalApi.encodeKey(key)))
			.httpRequest(connection)).exchangeToMono((response) -> {
				observe(peer, response);
				return readEntry(key, response);
			}));
		return guarded(peer, "get", call);
	}

	/** Sends an entry to the peer, which keeps the greater of it and its own. */
	public Mono<Void> upsert(Node peer, Entry entry) {
		byte[] value = entry.value();
		Mono<Void> call = closedOnCancel((connection) -> stamped(this.client.put()
			.uri(URI.create(peer.base() + InternalApi.ENTRY_PATH + "?id=" + InternalApi.encodeKey(entry.key())))
			.httpRequest(connection)
			.header(InternalApi.TIMESTAMP, Long.toString(entry.timestamp()))
			.header(InternalApi.TOMBSTONE, Boolean.toString(value == null))
			.headers((headers) -> {
				if (entry.expires()) {
					headers.set(InternalApi.EXPIRES_AT, Long.toString(entry.expiresAt()));
				}
			})
			.contentType(MediaType.APPLICATION_OCTET_STREAM)).body(bytes((value != null) ? value : NO_BYTES))
			.exchangeToMono((response) -> {
				observe(peer, response);
				return expect(response, HttpStatus.CREATED);
			}));
		return guarded(peer, "upsert", call);
	}

	/**
	 * Sends a batch of replica operations ({@link BatchCodec}) and emits the answer body,
	 * read whole into one array. An answer over the largest batch frame fails the call
	 * instead of being held.
	 */
	public Mono<byte[]> batch(Node peer, byte[] body) {
		URI uri = this.batchUris.computeIfAbsent(peer.base(), (base) -> URI.create(base + InternalApi.BATCH_PATH));
		Mono<byte[]> call = closedOnCancel((connection) -> stamped(
				this.client.post().uri(uri).httpRequest(connection).contentType(MediaType.APPLICATION_OCTET_STREAM))
			.body(bytes(body))
			.exchangeToMono((response) -> {
				observe(peer, response);
				return (response.statusCode().value() == HttpStatus.OK.value()) ? joined(response, this.maxFrameSize)
						: failure(response);
			}));
		return guarded(peer, "batch", call);
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
		return joined(response, this.maxFrameSize).map((value) -> Optional
			.of(Entry.wrap(key.clone(), tombstone ? null : value, Long.parseLong(timestamp), expiresAt)));
	}

	private static Mono<Void> expect(ClientResponse response, HttpStatus status) {
		return (response.statusCode().value() == status.value()) ? response.releaseBody() : failure(response);
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

	/** Closes the pooled connections; a second call finds none left. */
	@Override
	public void close() {
		this.connections.dispose();
	}

	private record TimerKey(String peer, String operation, String outcome) {
	}

}
