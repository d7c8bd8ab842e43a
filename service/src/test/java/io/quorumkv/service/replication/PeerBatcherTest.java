package io.quorumkv.service.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import io.quorumkv.service.peer.EventLoopTimers;
import io.quorumkv.service.peer.PeerException;
import io.quorumkv.service.replication.BatchCodec.Operation;
import io.quorumkv.service.replication.BatchCodec.Result;
import io.quorumkv.service.replication.PeerBatcher.BatchQueueFullException;
import io.quorumkv.storage.Entry;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

class PeerBatcherTest {

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	/** The calls the batcher made: their operations and the sink that answers each. */
	private final List<Call> calls = new CopyOnWriteArrayList<>();

	private final List<byte[]> singleGets = new CopyOnWriteArrayList<>();

	private record Call(List<Operation> operations, Sinks.One<byte[]> answer) {

		void answer(List<Result> results) {
			this.answer.tryEmitValue(BatchCodec.encodeResponse(results));
		}

		void fail(Throwable error) {
			this.answer.tryEmitError(error);
		}

	}

	private PeerBatcher batcher(int maxInFlight, int maxOps, int maxBytes, int maxQueued, Duration maxWait) {
		return new PeerBatcher("peer", (body) -> {
			Sinks.One<byte[]> answer = Sinks.one();
			this.calls.add(new Call(BatchCodec.decodeRequest(body, 64), answer));
			return answer.asMono();
		}, (key) -> {
			this.singleGets.add(key);
			return Mono.just(Optional.of(Entry.value(key, "alone".getBytes(), 1)));
		}, new PeerBatcher.Limits(maxInFlight, maxOps, maxBytes, maxQueued, 64, maxWait), this.meters);
	}

	private static Entry entry(int i) {
		return Entry.value(("k" + i).getBytes(), ("v" + i).getBytes(), i);
	}

	@Test
	void underLightLoadEachOperationGoesAtOnceAlone() {
		PeerBatcher batcher = batcher(2, 100, 1 << 20, 100, Duration.ofSeconds(5));
		AtomicReference<String> done = new AtomicReference<>();
		batcher.upsert(entry(1)).subscribe(null, null, () -> done.set("kept"));
		assertThat(this.calls).hasSize(1);
		assertThat(this.calls.getFirst().operations()).hasSize(1);
		this.calls.getFirst().answer(List.of(Result.KEPT));
		assertThat(done).hasValue("kept");
		batcher.upsert(entry(2)).subscribe();
		assertThat(this.calls).hasSize(2);
		assertThat(batcher.queued()).isZero();
	}

	@Test
	void whileCallsAreUnderWayOperationsQueueAndTheNextCallTakesThemAll() {
		PeerBatcher batcher = batcher(1, 100, 1 << 20, 100, Duration.ofSeconds(5));
		List<Object> answers = new CopyOnWriteArrayList<>();
		batcher.upsert(entry(0)).subscribe(null, answers::add, () -> answers.add("kept 0"));
		for (int i = 1; i <= 5; i++) {
			int index = i;
			batcher.get(("k" + i).getBytes())
				.subscribe((found) -> answers.add("got " + index + " " + found.isPresent()));
		}
		assertThat(this.calls).hasSize(1);
		assertThat(batcher.queued()).isEqualTo(5);
		this.calls.getFirst().answer(List.of(Result.KEPT));
		assertThat(this.calls).hasSize(2);
		assertThat(this.calls.get(1).operations()).hasSize(5).allMatch(Operation::isGet);
		this.calls.get(1)
			.answer(List.of(Result.ABSENT, Result.found(Entry.value("k2".getBytes(), "x".getBytes(), 1)), Result.ABSENT,
					Result.ABSENT, Result.ABSENT));
		assertThat(answers).containsExactly("kept 0", "got 1 false", "got 2 true", "got 3 false", "got 4 false",
				"got 5 false");
		assertThat(this.meters.get("quorumkv.replica.batch.size").summary().max()).isEqualTo(5);
	}

	@Test
	void onAnEventLoopTheCallWaitsForTheEndOfTheTurnAndCarriesAllOfItsOperations() throws Exception {
		EventLoop loop = new DefaultEventLoop();
		try {
			PeerBatcher batcher = new PeerBatcher("peer", (body) -> {
				Sinks.One<byte[]> answer = Sinks.one();
				this.calls.add(new Call(BatchCodec.decodeRequest(body, 64), answer));
				return answer.asMono();
			}, (key) -> Mono.empty(), new PeerBatcher.Limits(1, 100, 1 << 20, 100, 64, Duration.ofSeconds(5)),
					new EventLoopTimers(loop), this.meters);
			List<String> kept = new CopyOnWriteArrayList<>();
			int callsInTheTurn = loop.submit(() -> {
				for (int i = 0; i < 3; i++) {
					String name = "kept " + i;
					batcher.upsert(entry(i)).subscribe(null, null, () -> kept.add(name));
				}
				return this.calls.size();
			}).get(10, TimeUnit.SECONDS);
			assertThat(callsInTheTurn).as("no call before the turn ends").isZero();
			// The turn's task has run once a later task of the same loop has.
			loop.submit(() -> null).get(10, TimeUnit.SECONDS);
			assertThat(this.calls).singleElement()
				.extracting(Call::operations)
				.asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.LIST)
				.hasSize(3);
			this.calls.getFirst().answer(List.of(Result.KEPT, Result.KEPT, Result.KEPT));
			assertThat(kept).containsExactly("kept 0", "kept 1", "kept 2");
			// Off the loop, an idle batcher's call still goes at once.
			batcher.upsert(entry(3)).subscribe();
			assertThat(this.calls).hasSize(2);
			assertThat(batcher.queued()).isZero();
		}
		finally {
			loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
		}
	}

	@Test
	void batchesRespectTheOperationAndByteLimitsButABigOperationStillGoesAlone() {
		int small = Operation.upsert(entry(1)).encodedSize();
		PeerBatcher batcher = batcher(1, 3, small * 2, 100, Duration.ofSeconds(5));
		batcher.upsert(entry(0)).subscribe();
		for (int i = 1; i <= 4; i++) {
			batcher.upsert(entry(i)).subscribe();
		}
		Entry big = Entry.value("big".getBytes(), new byte[small * 10], 1);
		batcher.upsert(big).subscribe();
		this.calls.getFirst().answer(List.of(Result.KEPT));
		assertThat(this.calls.get(1).operations()).hasSize(2);
		this.calls.get(1).answer(List.of(Result.KEPT, Result.KEPT));
		assertThat(this.calls.get(2).operations()).hasSize(2);
		this.calls.get(2).answer(List.of(Result.KEPT, Result.KEPT));
		assertThat(this.calls.get(3).operations()).extracting(Operation::entry).containsExactly(big);
	}

	@Test
	void aFailedCallFailsEachOfItsOperationsAndTheQueueGoesOn() {
		PeerBatcher batcher = batcher(1, 100, 1 << 20, 100, Duration.ofSeconds(5));
		List<Throwable> errors = new CopyOnWriteArrayList<>();
		List<String> kept = new CopyOnWriteArrayList<>();
		batcher.upsert(entry(0)).subscribe(null, errors::add);
		batcher.upsert(entry(1)).subscribe(null, errors::add, () -> kept.add("1"));
		batcher.upsert(entry(2)).subscribe(null, errors::add, () -> kept.add("2"));
		this.calls.getFirst().fail(new TimeoutException("slow peer"));
		assertThat(errors).hasSize(1).first().isInstanceOf(TimeoutException.class);
		this.calls.get(1).answer(List.of(Result.failed("disk full"), Result.KEPT));
		assertThat(errors).hasSize(2);
		assertThat(errors.get(1)).isInstanceOf(PeerException.class).hasMessageContaining("disk full");
		assertThat(kept).containsExactly("2");
	}

	@Test
	void anAnswerThatDoesNotMatchFailsTheWholeBatch() {
		PeerBatcher batcher = batcher(1, 100, 1 << 20, 100, Duration.ofSeconds(5));
		List<Throwable> errors = new CopyOnWriteArrayList<>();
		batcher.upsert(entry(0)).subscribe(null, errors::add);
		this.calls.getFirst().answer(List.of(Result.KEPT, Result.KEPT));
		assertThat(errors).singleElement().isInstanceOf(BatchCodec.MalformedBatchException.class);
		batcher.upsert(entry(1)).subscribe(null, errors::add);
		this.calls.get(1).answer.tryEmitEmpty();
		assertThat(errors).hasSize(2).last().isInstanceOf(PeerException.class);
	}

	@Test
	void callsThatFailAtOnceDrainTheQueueWithoutRecursion() {
		AtomicInteger errors = new AtomicInteger();
		AtomicReference<Boolean> open = new AtomicReference<>(false);
		List<Sinks.One<byte[]>> pending = new ArrayList<>();
		PeerBatcher batcher = new PeerBatcher("peer", (body) -> {
			if (open.get()) {
				return Mono.error(new IllegalStateException("breaker open"));
			}
			Sinks.One<byte[]> answer = Sinks.one();
			pending.add(answer);
			return answer.asMono();
		}, (key) -> Mono.empty(), new PeerBatcher.Limits(1, 1, 1 << 20, 100_000, 64, Duration.ofSeconds(5)),
				this.meters);
		batcher.upsert(entry(0)).subscribe(null, (error) -> errors.incrementAndGet());
		for (int i = 1; i <= 50_000; i++) {
			batcher.upsert(entry(i)).subscribe(null, (error) -> errors.incrementAndGet());
		}
		open.set(true);
		pending.getFirst().tryEmitError(new IllegalStateException("breaker open"));
		assertThat(errors).hasValue(50_001);
		assertThat(batcher.queued()).isZero();
		batcher.upsert(entry(1)).subscribe(null, (error) -> errors.incrementAndGet());
		assertThat(errors).hasValue(50_002);
	}

	@Test
	void aFullQueueRefusesAtOnce() {
		PeerBatcher batcher = batcher(1, 100, 1 << 20, 2, Duration.ofSeconds(5));
		List<Throwable> errors = new CopyOnWriteArrayList<>();
		for (int i = 0; i < 4; i++) {
			batcher.upsert(entry(i)).subscribe(null, errors::add);
		}
		assertThat(batcher.queued()).isEqualTo(2);
		assertThat(errors).singleElement().isInstanceOf(BatchQueueFullException.class);
		assertThat(this.meters.get("quorumkv.replica.batch.rejected").counter().count()).isEqualTo(1);
		assertThat(this.meters.get("quorumkv.replica.batch.queued").gauge().value()).isEqualTo(2);
	}

	@Test
	void operationsThatWaitedLongerThanTheTimeoutAreFailedInsteadOfSent() throws InterruptedException {
		PeerBatcher batcher = batcher(1, 100, 1 << 20, 100, Duration.ofMillis(50));
		List<Throwable> errors = new CopyOnWriteArrayList<>();
		batcher.upsert(entry(0)).subscribe();
		batcher.upsert(entry(1)).subscribe(null, errors::add);
		Thread.sleep(120);
		batcher.upsert(entry(2)).subscribe(null, errors::add);
		this.calls.getFirst().answer(List.of(Result.KEPT));
		assertThat(errors).singleElement().isInstanceOf(TimeoutException.class);
		assertThat(this.calls).hasSize(2);
		assertThat(this.calls.get(1).operations()).extracting(Operation::entry).containsExactly(entry(2));
	}

	@Test
	void getsTheAnswerHadNoRoomForAreAskedAlone() {
		PeerBatcher batcher = batcher(1, 100, 1 << 20, 100, Duration.ofSeconds(5));
		AtomicReference<Optional<Entry>> got = new AtomicReference<>();
		batcher.get("k".getBytes()).subscribe(got::set);
		this.calls.getFirst().answer(List.of(Result.RETRY_ALONE));
		assertThat(this.singleGets).singleElement().isEqualTo("k".getBytes());
		assertThat(got.get()).get().extracting(Entry::value).isEqualTo("alone".getBytes());
	}

}
