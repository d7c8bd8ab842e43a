package io.quorumkv.service.peer;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.EventExecutor;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.peer.StreamFrames.Operation;
import io.quorumkv.service.peer.StreamFrames.Result;
import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The replica streams' contract against a peer whose misbehaviour each test chooses (a
 * bare Reactor Netty server speaking the frames): every operation is answered exactly
 * once, whatever the peer does, and in time.
 */
class ReplicaStreamsTest {

	/**
	 * Each operation's deadline: room for a first connection in a cold JVM on a busy
	 * machine.
	 */
	private static final Duration TIMEOUT = Duration.ofMillis(1500);

	private static final Duration WAIT = Duration.ofSeconds(10);

	private final LoopResources loops = LoopResources.create("streams-test", 2, true);

	private final ConnectionProvider pool = ConnectionProvider.builder("streams-test").maxConnections(16).build();

	/** What the peer does with each group of operations it reads. */
	private volatile Function<List<Operation>, Flux<ByteBuf>> peerBehaviour = ReplicaStreamsTest::answerAll;

	private final AtomicInteger exchanges = new AtomicInteger();

	private final Queue<Operation> seen = new ConcurrentLinkedQueue<>();

	private final AtomicLong epoch = new AtomicLong(7);

	private final Queue<String> reached = new ConcurrentLinkedQueue<>();

	private final AtomicInteger clockSamples = new AtomicInteger();

	private DisposableServer server;

	private Node peer;

	private CircuitBreaker breaker;

	private ReplicaStreams streams;

	@BeforeEach
	void start() {
		this.server = HttpServer.create().host("127.0.0.1").port(0).handle((request, response) -> {
			this.exchanges.incrementAndGet();
			FrameAssembler frames = new FrameAssembler(1 << 20);
			Flux<ByteBuf> answers = request.receive().asByteArray().concatMap((bytes) -> {
				List<Operation> operations = new ArrayList<>();
				frames.feed(bytes, (frame) -> operations.add(StreamFrames.readOperation(frame, 1024, 1 << 20)));
				this.seen.addAll(operations);
				return operations.isEmpty() ? Flux.empty() : this.peerBehaviour.apply(operations);
			});
			return response.header("content-type", "application/octet-stream").send(answers).then();
		}).bindNow();
		this.peer = new Node(URI.create("http://127.0.0.1:" + this.server.port()));
		startStreams(4, Duration.ofSeconds(30));
	}

	private void startStreams(int maxInFlight, Duration heartbeat) {
		if (this.streams != null) {
			this.streams.close();
		}
		EventExecutor[] executors = EventLoops.of(this.loops.onClient(true));
		WebClient client = WebClient.builder()
			.clientConnector(new ReactorClientHttpConnector(HttpClient.create(this.pool).runOn(this.loops)))
			.build();
		this.breaker = CircuitBreaker.of("peer", CircuitBreakerConfig.custom().minimumNumberOfCalls(1000).build());
		this.streams = new ReplicaStreams(
				client, executors, (node) -> this.breaker, new TestLinks(), new StreamSettings(maxInFlight, 1 << 20,
						1024, TIMEOUT, heartbeat, Duration.ofSeconds(60), Duration.ofMillis(200)),
				new SimpleMeterRegistry());
	}

	@AfterEach
	void stop() {
		this.streams.close();
		this.server.disposeNow();
		this.pool.disposeLater().block(WAIT);
		this.loops.disposeLater().block(WAIT);
	}

	@Test
	void answersComeBackMatchedByIdEvenOutOfOrder() throws Exception {
		this.peerBehaviour = (operations) -> {
			List<Operation> reversed = new ArrayList<>(operations);
			Collections.reverse(reversed);
			return answerAll(reversed);
		};
		List<Outcome<Optional<Entry>>> gets = new ArrayList<>();
		runOnLoop(() -> {
			for (int i = 0; i < 3; i++) {
				Outcome<Optional<Entry>> outcome = new Outcome<>();
				gets.add(outcome);
				this.streams.get(this.peer, key("k" + i), outcome);
			}
		});
		for (int i = 0; i < 3; i++) {
			Optional<Entry> entry = gets.get(i).value();
			assertThat(entry).isPresent();
			assertThat(new String(entry.get().value(), StandardCharsets.UTF_8)).isEqualTo("value of k" + i);
		}
		assertThat(this.streams.upsert(this.peer, Entry.value(key("w"), key("v"), 5)).blockOptional(WAIT)).isEmpty();
		assertThat(this.seen).anySatisfy((operation) -> assertThat(operation.entry()).isNotNull());
		assertThat(this.seen).allSatisfy((operation) -> assertThat(operation.epoch()).isEqualTo(7));
		assertThat(this.reached).contains(this.peer.id());
		gets.forEach(Outcome::assertOnce);
	}

	@Test
	void theOperationsOfOneTurnLeaveInOneChunkAndOneExchangeCarriesThemAll() throws Exception {
		List<Outcome<Void>> writes = new ArrayList<>();
		runOnLoop(() -> {
			for (int i = 0; i < 4; i++) {
				Outcome<Void> outcome = new Outcome<>();
				writes.add(outcome);
				this.streams.upsert(this.peer, Entry.value(key("k" + i), key("v"), 1), outcome);
			}
		});
		for (Outcome<Void> write : writes) {
			write.value();
		}
		assertThat(this.seen).hasSize(4);
		assertThat(this.exchanges).hasValue(1);
	}

	@Test
	void aPeerThatNeverAnswersTimesOutEachOperationOnceAndItsLateAnswerIsDropped() throws Exception {
		Sinks.Many<ByteBuf> late = Sinks.many().unicast().onBackpressureBuffer();
		Queue<Operation> withheld = new ConcurrentLinkedQueue<>();
		this.peerBehaviour = (operations) -> {
			withheld.addAll(operations);
			return late.asFlux().take(1);
		};
		Outcome<Optional<Entry>> get = new Outcome<>();
		long start = System.nanoTime();
		runOnLoop(() -> this.streams.get(this.peer, key("slow"), get));
		assertThat(get.error()).isInstanceOf(TimeoutException.class);
		long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
		assertThat(tookMillis).isGreaterThanOrEqualTo(TIMEOUT.toMillis() - 50);
		// The answer arrives after the deadline: dropped, not a second answer.
		late.tryEmitNext(answerAll(new ArrayList<>(withheld)).blockFirst(WAIT));
		Thread.sleep(200);
		get.assertOnce();
		assertThat(this.streams.inFlight(this.peer)).isZero();
	}

	@Test
	void aPeerThatDiesMidStreamFailsWhatIsInFlightAtOnceAndTheNextOperationReconnects() throws Exception {
		this.peerBehaviour = (operations) -> Flux.error(new IllegalStateException("killed"));
		Outcome<Void> write = new Outcome<>();
		runOnLoop(() -> this.streams.upsert(this.peer, Entry.value(key("k"), key("v"), 1), write));
		// Failed by the break itself, not at its deadline (a TimeoutException).
		assertThat(write.error()).isInstanceOf(PeerException.class).isNotInstanceOf(StaleRingException.class);
		this.peerBehaviour = ReplicaStreamsTest::answerAll;
		awaitTrue(() -> {
			Outcome<Void> again = new Outcome<>();
			runOnLoop(() -> this.streams.upsert(this.peer, Entry.value(key("k"), key("v"), 2), again));
			return again.errorOrNull() == null;
		});
		assertThat(this.exchanges.get()).isGreaterThanOrEqualTo(2);
		write.assertOnce();
	}

	@Test
	void aFrameCutInHalfThenAClosedConnectionFailsTheOperation() throws Exception {
		this.peerBehaviour = (operations) -> {
			ByteBuf whole = answerAll(operations).blockFirst(WAIT);
			ByteBuf half = whole.retainedSlice(0, whole.readableBytes() / 2);
			whole.release();
			return Flux.just(half).concatWith(Flux.error(new IllegalStateException("cut")));
		};
		Outcome<Optional<Entry>> get = new Outcome<>();
		runOnLoop(() -> this.streams.get(this.peer, key("k"), get));
		assertThat(get.error()).isInstanceOf(PeerException.class);
		get.assertOnce();
	}

	@Test
	void anOversizedFrameEndsTheStreamAndFailsItsOperations() throws Exception {
		this.peerBehaviour = (operations) -> Flux
			.just(Unpooled.wrappedBuffer(ByteBuffer.allocate(8).putInt(Integer.MAX_VALUE).putInt(1).flip()));
		Outcome<Optional<Entry>> get = new Outcome<>();
		runOnLoop(() -> this.streams.get(this.peer, key("k"), get));
		assertThat(get.error()).isInstanceOf(PeerException.class).hasMessageContaining("malformed frame");
		get.assertOnce();
	}

	@Test
	void operationsPastTheBoundAreRefusedAtOnce() throws Exception {
		Sinks.Many<ByteBuf> never = Sinks.many().unicast().onBackpressureBuffer();
		this.peerBehaviour = (operations) -> never.asFlux();
		List<Outcome<Void>> writes = new ArrayList<>();
		runOnLoop(() -> {
			for (int i = 0; i < 6; i++) {
				Outcome<Void> outcome = new Outcome<>();
				writes.add(outcome);
				this.streams.upsert(this.peer, Entry.value(key("k" + i), key("v"), 1), outcome);
			}
		});
		// The bound is 4 a stream: the last two are refused at once, the others time out.
		assertThat(writes.get(4).error()).isInstanceOf(PeerException.class).hasMessageContaining("in flight");
		assertThat(writes.get(5).error()).isInstanceOf(PeerException.class).hasMessageContaining("in flight");
		for (int i = 0; i < 4; i++) {
			assertThat(writes.get(i).error()).isInstanceOf(TimeoutException.class);
		}
		writes.forEach(Outcome::assertOnce);
	}

	@Test
	void anEpochChangeMidStreamIsCarriedByTheNextOperations() throws Exception {
		Outcome<Optional<Entry>> first = new Outcome<>();
		runOnLoop(() -> this.streams.get(this.peer, key("a"), first));
		assertThat(first.value()).isPresent();
		this.epoch.set(8);
		Outcome<Optional<Entry>> second = new Outcome<>();
		runOnLoop(() -> this.streams.get(this.peer, key("b"), second));
		assertThat(second.value()).isPresent();
		assertThat(this.seen).extracting(Operation::epoch).containsExactly(7L, 8L);
		assertThat(this.exchanges).hasValue(1);
	}

	@Test
	void aStaleRingAnswerFailsTheOperationWithoutOpeningTheBreakerAndReportsTheNewerEpoch() throws Exception {
		this.peerBehaviour = (operations) -> encode(
				operations.stream().map((operation) -> Result.staleRing(operation.id(), 9)).toList());
		Outcome<Void> write = new Outcome<>();
		runOnLoop(() -> this.streams.upsert(this.peer, Entry.value(key("k"), key("v"), 1), write));
		assertThat(write.error()).isInstanceOf(StaleRingException.class);
		assertThat(this.reached).contains("newer 9");
	}

	@Test
	void heartbeatsKeepAnIdleStreamOpenAndSampleThePeersClock() throws Exception {
		startStreams(4, Duration.ofMillis(50));
		Outcome<Optional<Entry>> get = new Outcome<>();
		runOnLoop(() -> this.streams.get(this.peer, key("a"), get));
		assertThat(get.value()).isPresent();
		awaitTrue(() -> this.clockSamples.get() >= 3);
		assertThat(this.exchanges).hasValue(1);
	}

	@Test
	void aStreamThatCannotOpenFailsFastUntilItsBackoffEndsOrThePeerIsKnownUp() throws Exception {
		this.server.disposeNow();
		Outcome<Void> first = new Outcome<>();
		runOnLoop(() -> this.streams.upsert(this.peer, Entry.value(key("k"), key("v"), 1), first));
		assertThat(first.error()).isInstanceOf(PeerException.class);
		Outcome<Void> second = new Outcome<>();
		runOnLoop(() -> this.streams.upsert(this.peer, Entry.value(key("k"), key("v"), 1), second));
		// Refused without a try: the message says when the next one will be.
		assertThat(second.error()).isInstanceOf(PeerException.class).hasMessageContaining("next try");
		this.streams.peerIsUp(this.peer.id());
		Outcome<Void> third = new Outcome<>();
		runOnLoop(() -> this.streams.upsert(this.peer, Entry.value(key("k"), key("v"), 1), third));
		assertThat(third.error()).isInstanceOf(PeerException.class).hasMessageNotContaining("next try");
	}

	@Test
	void shutdownWhileBusyAnswersWhatWasSentAndRefusesWhatComesAfter() throws Exception {
		Sinks.Many<ByteBuf> later = Sinks.many().unicast().onBackpressureBuffer();
		Queue<Operation> withheld = new ConcurrentLinkedQueue<>();
		this.peerBehaviour = (operations) -> {
			withheld.addAll(operations);
			return later.asFlux().take(1);
		};
		Outcome<Void> sent = new Outcome<>();
		runOnLoop(() -> this.streams.upsert(this.peer, Entry.value(key("k"), key("v"), 1), sent));
		awaitTrue(() -> !withheld.isEmpty());
		this.streams.close();
		later.tryEmitNext(answerAll(new ArrayList<>(withheld)).blockFirst(WAIT));
		sent.value();
		Outcome<Void> after = new Outcome<>();
		runOnLoop(() -> this.streams.upsert(this.peer, Entry.value(key("k"), key("v"), 2), after));
		assertThat(after.error()).isInstanceOf(PeerException.class).hasMessageContaining("shutting down");
		sent.assertOnce();
	}

	@Test
	void operationsIssuedOffTheLoopsAreAnsweredOnALoop() throws Exception {
		Outcome<Optional<Entry>> get = new Outcome<>();
		this.streams.get(this.peer, key("off"), get);
		assertThat(get.value()).isPresent();
		assertThat(get.thread()).startsWith("streams-test");
	}

	/** Answers every operation: a get finds "value of KEY", an upsert is kept. */
	private static Flux<ByteBuf> answerAll(List<Operation> operations) {
		List<Result> results = new ArrayList<>();
		for (Operation operation : operations) {
			results.add(switch (operation.kind()) {
				case StreamFrames.GET -> Result.found(operation.id(), Entry.value(operation.key(),
						("value of " + new String(operation.key(), StandardCharsets.UTF_8)).getBytes(), 3));
				case StreamFrames.UPSERT -> Result.kept(operation.id());
				default -> Result.pong(operation.id(), 42);
			});
		}
		return encode(results);
	}

	private static Flux<ByteBuf> encode(List<Result> results) {
		return Flux.just(Unpooled.wrappedBuffer(StreamResults.encode(results)));
	}

	private static byte[] key(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	private void runOnLoop(Runnable task) throws InterruptedException {
		CountDownLatch done = new CountDownLatch(1);
		EventLoops.of(this.loops.onClient(true))[0].execute(() -> {
			try {
				task.run();
			}
			finally {
				done.countDown();
			}
		});
		assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
	}

	private static void awaitTrue(Condition condition) throws InterruptedException {
		long end = System.nanoTime() + WAIT.toNanos();
		while (!condition.holds()) {
			assertThat(System.nanoTime() - end).as("waited %s", WAIT).isNegative();
			Thread.sleep(20);
		}
	}

	@FunctionalInterface
	private interface Condition {

		boolean holds() throws InterruptedException;

	}

	private final class TestLinks implements ReplicaStreams.Links {

		@Override
		public @Nullable String stamp() {
			return ReplicaStreamsTest.this.epoch.get() + " qkv-test node-1 http://127.0.0.1:1";
		}

		@Override
		public long epoch() {
			return ReplicaStreamsTest.this.epoch.get();
		}

		@Override
		public void newerRing(Node peer, @Nullable String stamp, long epoch) {
			ReplicaStreamsTest.this.reached.add("newer " + epoch);
		}

		@Override
		public long wallMicros() {
			return 1;
		}

		@Override
		public void clockSample(Node peer, long sentMicros, long receivedMicros, long peerMicros) {
			ReplicaStreamsTest.this.clockSamples.incrementAndGet();
		}

		@Override
		public void reached(Node peer) {
			ReplicaStreamsTest.this.reached.add(peer.id());
		}

		@Override
		public void outcome(Node peer, String outcome) {
		}

	}

	/** One operation's answers, counted: exactly one is expected. */
	private static final class Outcome<T> implements ReplicaStreams.Callback<T> {

		private final CountDownLatch done = new CountDownLatch(1);

		private final AtomicInteger answers = new AtomicInteger();

		private volatile @Nullable T value;

		private volatile @Nullable Throwable error;

		private volatile String thread = "";

		@Override
		public void answered(T value) {
			this.value = value;
			this.thread = Thread.currentThread().getName();
			this.answers.incrementAndGet();
			this.done.countDown();
		}

		@Override
		public void failed(Throwable error) {
			this.error = error;
			this.thread = Thread.currentThread().getName();
			this.answers.incrementAndGet();
			this.done.countDown();
		}

		@Nullable T value() throws InterruptedException {
			await();
			assertThat(this.error).as("the operation's failure").isNull();
			return this.value;
		}

		Throwable error() throws InterruptedException {
			await();
			assertThat(this.error).as("the operation's failure").isNotNull();
			return this.error;
		}

		@Nullable Throwable errorOrNull() throws InterruptedException {
			await();
			return this.error;
		}

		String thread() {
			return this.thread;
		}

		void assertOnce() {
			assertThat(this.answers).as("answers to one operation").hasValue(1);
		}

		private void await() throws InterruptedException {
			assertThat(this.done.await(10, TimeUnit.SECONDS)).as("answered within 10 s").isTrue();
		}

	}

}
