package io.quorumkv.service.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.EventLoop;
import io.quorumkv.service.cluster.Node;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.resources.LoopResources;
import reactor.test.StepVerifier;

/**
 * The batch calls' own connections: reuse, the loop that answers, the retry of a reused
 * connection the peer closed, the bounds, idle closing and close. What a call sends and
 * makes of each kind of answer is {@link PeerClientBatchTest}'s.
 */
class BatchConnectionsTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private final LoopResources loops = LoopResources.create("batch-connections-test", 2, true);

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	/** The client ports the peer saw, one per connection. */
	private final Set<Integer> clientPorts = ConcurrentHashMap.newKeySet();

	private final AtomicInteger requests = new AtomicInteger();

	private DisposableServer server;

	private BatchConnections connections;

	@AfterEach
	void close() {
		if (this.connections != null) {
			this.connections.close();
		}
		if (this.server != null) {
			this.server.disposeNow();
		}
		this.loops.disposeLater(Duration.ZERO, TIMEOUT).block(TIMEOUT);
	}

	/**
	 * A peer answering each request with {@code answer}, given the request's number from
	 * 1.
	 */
	private Node start(int maxPerLoop, Duration maxIdle, BiFunction<Integer, HttpServerResponse, Mono<Void>> answer) {
		this.server = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.route((routes) -> routes.post(InternalApi.BATCH_PATH, (HttpServerRequest request,
					HttpServerResponse response) -> request.receive().aggregate().then(Mono.defer(() -> {
						this.clientPorts.add(((InetSocketAddress) request.remoteAddress()).getPort());
						return answer.apply(this.requests.incrementAndGet(), response);
					}))))
			.bindNow();
		this.connections = new BatchConnections(this.loops, "secret", 1024, Duration.ofMillis(500), maxPerLoop, maxIdle,
				this.meters);
		return new Node(URI.create("http://127.0.0.1:" + this.server.port()));
	}

	private static Mono<Void> send(HttpServerResponse response, int value) {
		return response.sendByteArray(Mono.just(new byte[] { (byte) value })).then();
	}

	/** A call made on the first loop (off the loops, each call would take the next). */
	private Mono<byte[]> call(Node peer) {
		EventLoop loop = (EventLoop) this.loops.onServer(true).iterator().next();
		return Mono.defer(() -> this.connections.call(peer, new byte[] { 1 }))
			.subscribeOn(Schedulers.fromExecutor(loop));
	}

	private static Mono<Void> closeWithoutAnswer(HttpServerResponse response) {
		return Mono.<Void>fromRunnable(() -> response.withConnection((connection) -> connection.channel().close()))
			.then(Mono.never());
	}

	private double open() {
		return this.meters.get("quorumkv.replica.batch.connections").gauge().value();
	}

	@Test
	void callsOneAfterAnotherShareOneConnection() {
		Node peer = start(4, Duration.ofSeconds(30), (n, response) -> send(response, n));
		for (int i = 1; i <= 3; i++) {
			StepVerifier.create(call(peer))
				.assertNext((answer) -> assertThat(answer).hasSize(1))
				.expectComplete()
				.verify(TIMEOUT);
		}
		assertThat(this.requests).hasValue(3);
		assertThat(this.clientPorts).hasSize(1);
		assertThat(open()).isEqualTo(1.0);
	}

	@Test
	void aCallMadeOnALoopIsAnsweredOnThatLoop() {
		Node peer = start(4, Duration.ofSeconds(30), (n, response) -> send(response, n));
		for (EventLoop loop : new EventLoop[] { (EventLoop) this.loops.onServer(true).next(),
				(EventLoop) this.loops.onServer(true).next() }) {
			String[] answeredOn = new String[2];
			StepVerifier.create(Mono.defer(() -> {
				answeredOn[0] = Thread.currentThread().getName();
				return this.connections.call(peer, new byte[] { 1 });
			})
				.doOnNext((answer) -> answeredOn[1] = Thread.currentThread().getName())
				.subscribeOn(Schedulers.fromExecutor(loop))).expectNextCount(1).expectComplete().verify(TIMEOUT);
			assertThat(answeredOn[1]).isEqualTo(answeredOn[0]).startsWith("batch-connections-test");
		}
		// Each loop its own connection.
		assertThat(this.clientPorts).hasSize(2);
	}

	@Test
	void aReusedConnectionThePeerClosedWithoutAnsweringIsRetriedOnANewOne() {
		// The second request meets a connection the peer closes, as at the end of its
		// idle timeout: the call goes again on a new connection and gets the third
		// answer.
		Node peer = start(4, Duration.ofSeconds(30),
				(n, response) -> (n == 2) ? closeWithoutAnswer(response) : send(response, n));
		StepVerifier.create(call(peer))
			.assertNext((answer) -> assertThat(answer).containsExactly(1))
			.expectComplete()
			.verify(TIMEOUT);
		StepVerifier.create(call(peer))
			.assertNext((answer) -> assertThat(answer).containsExactly(3))
			.expectComplete()
			.verify(TIMEOUT);
		assertThat(this.requests).hasValue(3);
		assertThat(this.clientPorts).hasSize(2);
	}

	@Test
	void aNewConnectionClosedWithoutAnAnswerFailsTheCallWithoutARetry() {
		Node peer = start(4, Duration.ofSeconds(30), (n, response) -> closeWithoutAnswer(response));
		StepVerifier.create(call(peer))
			.expectErrorSatisfies((error) -> assertThat(error).isInstanceOf(PeerException.class)
				.hasMessageContaining("closed before the whole answer"))
			.verify(TIMEOUT);
		assertThat(this.requests).hasValue(1);
	}

	@Test
	void aLoopOpensNoMoreThanItsLimitOfConnectionsToAPeer() {
		Node peer = start(1, Duration.ofSeconds(30),
				(n, response) -> Mono.delay(Duration.ofMillis(300)).then(send(response, n)));
		EventLoop loop = (EventLoop) this.loops.onServer(true).next();
		Mono<byte[]> two = Mono
			.defer(() -> this.connections.call(peer, new byte[] { 1 })
				.zipWith(this.connections.call(peer, new byte[] { 2 }).onErrorResume(Mono::error))
				.map((pair) -> pair.getT1()))
			.subscribeOn(Schedulers.fromExecutor(loop));
		StepVerifier.create(two)
			.expectErrorSatisfies((error) -> assertThat(error).isInstanceOf(PeerException.class)
				.hasMessageContaining("1 connections to " + peer + " already carry batch calls"))
			.verify(TIMEOUT);
	}

	@Test
	void anIdleConnectionIsClosedAfterTheIdleTime() throws InterruptedException {
		Node peer = start(4, Duration.ofMillis(200), (n, response) -> send(response, n));
		StepVerifier.create(call(peer)).expectNextCount(1).expectComplete().verify(TIMEOUT);
		assertThat(open()).isEqualTo(1.0);
		long deadline = System.nanoTime() + TIMEOUT.toNanos();
		while (open() > 0 && System.nanoTime() < deadline) {
			Thread.sleep(20);
		}
		assertThat(open()).isZero();
		// The next call opens a new one.
		StepVerifier.create(call(peer)).expectNextCount(1).expectComplete().verify(TIMEOUT);
		assertThat(this.clientPorts).hasSize(2);
	}

	@Test
	void closingFailsTheCallsUnderWayAndLaterOnes() {
		Node peer = start(4, Duration.ofSeconds(30), (n, response) -> Mono.never());
		StepVerifier.create(this.connections.call(peer, new byte[] { 1 })).then(() -> {
			long deadline = System.nanoTime() + TIMEOUT.toNanos();
			while (this.requests.get() == 0 && System.nanoTime() < deadline) {
				Thread.onSpinWait();
			}
			this.connections.close();
		}).expectError(PeerException.class).verify(TIMEOUT);
		StepVerifier.create(call(peer))
			.expectErrorSatisfies(
					(error) -> assertThat(error).isInstanceOf(PeerException.class).hasMessageContaining("closed"))
			.verify(TIMEOUT);
	}

	@Test
	void aPeerThatIsNotListeningFailsTheCall() throws Exception {
		int port;
		try (ServerSocket socket = new ServerSocket(0)) {
			port = socket.getLocalPort();
		}
		this.connections = new BatchConnections(this.loops, "secret", 1024, Duration.ofMillis(500), 4,
				Duration.ofSeconds(30), this.meters);
		StepVerifier.create(this.connections.call(new Node(URI.create("http://127.0.0.1:" + port)), new byte[] { 1 }))
			.expectError(ConnectException.class)
			.verify(TIMEOUT);
		assertThat(open()).isZero();
	}

}
