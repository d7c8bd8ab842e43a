package io.quorumkv.service.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.quorumkv.service.peer.EventLoopTimers;
import io.quorumkv.service.peer.PeerException;
import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.PeerClocks;
import io.quorumkv.service.config.QuorumKvProperties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.resources.LoopResources;
import reactor.test.StepVerifier;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * The calls of {@link PeerClient} (one WebClient over one connection pool) against a bare
 * server: what a batch call sends, what it makes of every kind of answer, and that every
 * kind of call shares the pool.
 */
class PeerClientBatchTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	/** The largest batch answer the client takes: max(1MB, 4MB + 64KB) by default. */
	private static final int MAX_ANSWER = 4 * 1024 * 1024 + 65_536;

	private final LoopResources loops = LoopResources.create("peer-client-test", 1, true);

	private final AtomicReference<HttpHeaders> seenHeaders = new AtomicReference<>();

	private final AtomicReference<byte[]> seenBody = new AtomicReference<>();

	private final AtomicReference<String> seenProtocol = new AtomicReference<>();

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private DisposableServer server;

	private PeerClient client;

	@AfterEach
	void close() {
		if (this.client != null) {
			this.client.close();
		}
		if (this.server != null) {
			this.server.disposeNow();
		}
		this.loops.disposeLater(Duration.ZERO, TIMEOUT).block(TIMEOUT);
	}

	private Node start(java.util.function.BiFunction<HttpServerRequest, HttpServerResponse, Mono<Void>> answer) {
		return start(HttpProtocol.HTTP11, Map.of(), answer);
	}

	private Node start(HttpProtocol protocol, Map<String, String> settings,
			java.util.function.BiFunction<HttpServerRequest, HttpServerResponse, Mono<Void>> answer) {
		this.server = HttpServer.create()
			.protocol(protocol)
			.host("127.0.0.1")
			.port(0)
			.route((routes) -> routes.post(InternalApi.BATCH_PATH,
					(request, response) -> request.receive().aggregate().asByteArray().flatMap((body) -> {
						this.seenHeaders.set(request.requestHeaders());
						this.seenBody.set(body);
						this.seenProtocol.set(request.protocol());
						return answer.apply(request, response);
					})))
			.bindNow();
		QuorumKvProperties properties = new Binder(new MapConfigurationPropertySource(settings))
			.bindOrCreate("quorumkv", QuorumKvProperties.class);
		this.client = new PeerClient(properties.cluster(), Node.of("http://127.0.0.1:1"), List.of(), "the-secret",
				MAX_ANSWER, this.loops, new EventLoopTimers(this.loops.onClient(true)), clocks(List.of()), this.meters,
				null);
		return new Node(URI.create("http://127.0.0.1:" + this.server.port()));
	}

	@Test
	void sendsTheBodyWithSecretAndLengthAndReturnsTheAnswer() {
		Node peer = start((request, response) -> response.sendByteArray(Mono.just(new byte[] { 7, 8, 9 })).then());
		StepVerifier.create(this.client.batch(peer, new byte[] { 1, 2, 3, 4 }))
			.assertNext((answer) -> assertThat(answer).containsExactly(7, 8, 9))
			.expectComplete()
			.verify(TIMEOUT);
		assertThat(this.seenBody.get()).containsExactly(1, 2, 3, 4);
		assertThat(this.seenHeaders.get().get(InternalApi.SECRET)).isEqualTo("the-secret");
		assertThat(this.seenHeaders.get().get(HttpHeaderNames.CONTENT_LENGTH)).isEqualTo("4");
		assertThat(this.seenHeaders.get().get(HttpHeaderNames.CONTENT_TYPE)).isEqualTo("application/octet-stream");
	}

	@Test
	void anEmptyAnswerIsAnEmptyArray() {
		Node peer = start((request, response) -> response.send().then());
		StepVerifier.create(this.client.batch(peer, new byte[] { 1 }))
			.assertNext((answer) -> assertThat(answer).isEmpty())
			.expectComplete()
			.verify(TIMEOUT);
	}

	@Test
	void aRefusalFailsWithTheStatusAndText() {
		Node peer = start((request, response) -> response.status(403).sendString(Mono.just("wrong secret\n")).then());
		StepVerifier.create(this.client.batch(peer, new byte[] { 1 }))
			.expectErrorSatisfies((error) -> assertThat(error).isInstanceOf(PeerException.class)
				.hasMessage("replica answered 403: wrong secret"))
			.verify(TIMEOUT);
	}

	@Test
	void anAnswerOverTheLargestFrameFailsTheCall() {
		// Chunked, so that only counting the bytes as they come can stop it.
		byte[] chunk = new byte[64 * 1024];
		int chunks = MAX_ANSWER / chunk.length + 2;
		Node peer = start(
				(request, response) -> response.sendByteArray(Flux.range(0, chunks).map((i) -> chunk)).then());
		StepVerifier.create(this.client.batch(peer, new byte[] { 1 }))
			.expectErrorSatisfies((error) -> assertThat(error).isInstanceOf(PeerException.class)
				.hasMessageContaining("exceeds " + MAX_ANSWER))
			.verify(TIMEOUT);
	}

	@Test
	void aPeerThatDoesNotAnswerFailsTheCallThroughTheTimeLimiterOnTheCallersLoop() {
		Node peer = start(HttpProtocol.HTTP11, Map.of("quorumkv.cluster.replica-timeout", "300ms"),
				(request, response) -> Mono.never());
		EventLoop loop = (EventLoop) this.loops.onClient(true).next();
		AtomicReference<String> failedOn = new AtomicReference<>();
		long start = System.nanoTime();
		StepVerifier
			.create(Mono.defer(() -> this.client.batch(peer, new byte[] { 1 }))
				.doOnError((error) -> failedOn.set(Thread.currentThread().getName()))
				.subscribeOn(Schedulers.fromExecutor(loop)))
			.expectError(TimeoutException.class)
			.verify(TIMEOUT);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
		// The limiter's timer ran on the loop that made the call, not on a parallel
		// thread.
		assertThat(failedOn.get()).startsWith("peer-client-test");
		assertThat(this.client.lastOutcome(peer)).isEqualTo("timeout");
		assertThat(this.meters.get("resilience4j.timelimiter.calls").tag("kind", "timeout").counter().count())
			.isEqualTo(1.0);
		assertThat(this.meters.get("resilience4j.timelimiter.calls").tag("kind", "successful").counter().count())
			.isZero();
	}

	@Test
	void aTimedOutCallsConnectionIsNotReusedWithItsLateAnswer() {
		AtomicInteger calls = new AtomicInteger();
		// One connection to the peer: the second call waits for the first one's to be
		// given up, and would read the first call's late answer if it were reused.
		Node peer = start(HttpProtocol.HTTP11,
				Map.of("quorumkv.cluster.replica-timeout", "2s", "quorumkv.cluster.max-connections-per-peer", "1"),
				(request, response) -> (calls.incrementAndGet() == 1)
						? Mono.delay(Duration.ofMillis(6000))
							.then(response.sendByteArray(Mono.just(new byte[] { 1 })).then())
						: response.sendByteArray(Mono.just(new byte[] { 2 })).then());
		StepVerifier.create(this.client.batch(peer, new byte[] { 1 }))
			.expectError(TimeoutException.class)
			.verify(TIMEOUT);
		StepVerifier.create(this.client.batch(peer, new byte[] { 1 }))
			.assertNext((answer) -> assertThat(answer).containsExactly(2))
			.expectComplete()
			.verify(TIMEOUT);
		assertThat(calls).hasValue(2);
	}

	@Test
	void aCallInTimeCountsAsTheTimeLimitersSuccess() {
		Node peer = start((request, response) -> response.sendByteArray(Mono.just(new byte[] { 1 })).then());
		StepVerifier.create(this.client.batch(peer, new byte[] { 1 }))
			.expectNextCount(1)
			.expectComplete()
			.verify(TIMEOUT);
		assertThat(this.meters.get("resilience4j.timelimiter.calls").tag("kind", "successful").counter().count())
			.isEqualTo(1.0);
		assertThat(this.client.lastOutcome(peer)).isEqualTo("success");
	}

	@Test
	void batchesSingleCallsAndScansShareOnePooledConnection() {
		Set<Integer> clientPorts = ConcurrentHashMap.newKeySet();
		this.server = HttpServer.create().host("127.0.0.1").port(0).handle((request, response) -> {
			clientPorts.add(request.remoteAddress().getPort());
			return request.receive()
				.then(switch (request.uri()
					.substring(0,
							request.uri().indexOf('?') < 0 ? request.uri().length() : request.uri().indexOf('?'))) {
					case InternalApi.BATCH_PATH -> response.sendByteArray(Mono.just(new byte[] { 9 })).then();
					case InternalApi.ENTRY_PATH ->
						request.method().name().equals("PUT") ? response.status(201).send().then()
								: response.status(404).header(InternalApi.ABSENT, "true").send().then();
					default -> response.send().then();
				});
		}).bindNow();
		QuorumKvProperties properties = new Binder(
				new MapConfigurationPropertySource(Map.of("quorumkv.cluster.max-connections-per-peer", "1")))
			.bindOrCreate("quorumkv", QuorumKvProperties.class);
		Node peer = new Node(URI.create("http://127.0.0.1:" + this.server.port()));
		this.client = new PeerClient(properties.cluster(), Node.of("http://127.0.0.1:1"), List.of(peer), "the-secret",
				MAX_ANSWER, this.loops, new EventLoopTimers(this.loops.onClient(true)), clocks(List.of(peer)),
				this.meters, null);
		for (int i = 0; i < 3; i++) {
			StepVerifier.create(this.client.batch(peer, new byte[] { 1 }))
				.assertNext((answer) -> assertThat(answer).containsExactly(9))
				.expectComplete()
				.verify(TIMEOUT);
			StepVerifier.create(this.client.get(peer, new byte[] { 'k' }))
				.expectNext(Optional.empty())
				.expectComplete()
				.verify(TIMEOUT);
			StepVerifier
				.create(this.client.upsert(peer,
						io.quorumkv.storage.Entry.value(new byte[] { 'k' }, new byte[] { 'v' }, 1)))
				.expectComplete()
				.verify(TIMEOUT);
			StepVerifier.create(this.client.scan(peer, new byte[] { 'a' }, null, 10)).expectComplete().verify(TIMEOUT);
		}
		assertThat(clientPorts).as("one keep-alive connection carried every call").hasSize(1);
	}

	private PeerClient.Clocks clocks(List<Node> peers) {
		return new PeerClient.Clocks(HybridLogicalClock.inMemory(java.time.Clock.systemUTC(), Duration.ofMillis(500)),
				new PeerClocks(peers, Duration.ofSeconds(10), this.meters));
	}

	@Test
	void aHalfOpenBreakerClosesAtItsFirstSuccessWhateverItsOtherTrialsDo() {
		AtomicInteger calls = new AtomicInteger();
		// The first trial fails (as a call started while the peer was still coming back
		// would), the second succeeds.
		Node peer = start((request, response) -> (calls.incrementAndGet() == 1) ? response.status(503).send().then()
				: response.sendByteArray(Mono.just(new byte[] { 1 })).then());
		io.github.resilience4j.circuitbreaker.CircuitBreaker breaker = this.client.breaker(peer);
		breaker.transitionToOpenState();
		breaker.transitionToHalfOpenState();
		StepVerifier.create(this.client.batch(peer, new byte[] { 1 })).expectError(PeerException.class).verify(TIMEOUT);
		assertThat(breaker.getState()).isEqualTo(io.github.resilience4j.circuitbreaker.CircuitBreaker.State.HALF_OPEN);
		StepVerifier.create(this.client.batch(peer, new byte[] { 1 }))
			.expectNextCount(1)
			.expectComplete()
			.verify(TIMEOUT);
		assertThat(breaker.getState()).isEqualTo(io.github.resilience4j.circuitbreaker.CircuitBreaker.State.CLOSED);
	}

}
