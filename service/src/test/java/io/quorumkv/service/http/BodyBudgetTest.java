package io.quorumkv.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.quorumkv.storage.StorageOverloadedException;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.core.io.buffer.NettyDataBufferFactory;

class BodyBudgetTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	private static Flux<DataBuffer> body(int... sizes) {
		return Flux.fromArray(java.util.Arrays.stream(sizes).boxed().toArray(Integer[]::new))
			.map((size) -> DefaultDataBufferFactory.sharedInstance.wrap(new byte[size]));
	}

	private static final NettyDataBufferFactory NETTY = new NettyDataBufferFactory(UnpooledByteBufAllocator.DEFAULT);

	@Test
	void bytesCountUntilTheirUseCompletesThenAreReleased() {
		BodyBudget budget = new BodyBudget(100, new SimpleMeterRegistry());
		AtomicLong seenDuringUse = new AtomicLong();
		StepVerifier.create(budget.read(body(30, 20), 50, 1000, () -> false, (bytes) -> Mono.fromSupplier(() -> {
			seenDuringUse.set(budget.used());
			return bytes.length;
		}))).expectNext(50).expectComplete().verify(Duration.ofSeconds(5));
		assertThat(seenDuringUse).hasValue(50);
		assertThat(budget.used()).isZero();
	}

	@Test
	void aBodyThatWouldExceedTheBudgetIsRefusedAndReleased() {
		BodyBudget budget = new BodyBudget(40, new SimpleMeterRegistry());
		StepVerifier.create(budget.read(body(30, 20), -1, 1000, () -> false, (bytes) -> Mono.just(bytes.length)))
			.expectError(StorageOverloadedException.class)
			.verify(Duration.ofSeconds(5));
		assertThat(budget.used()).isZero();
	}

	@Test
	void concurrentBodiesShareTheBudget() {
		BodyBudget budget = new BodyBudget(60, new SimpleMeterRegistry());
		Sinks.One<Integer> release = Sinks.one();
		// The first body is held (its use has not completed) while the second arrives.
		Mono<Integer> held = budget.read(body(50), 50, 1000, () -> false, (bytes) -> release.asMono());
		StepVerifier.create(held)
			.then(() -> StepVerifier
				.create(budget.read(body(20), 20, 1000, () -> false, (bytes) -> Mono.just(bytes.length)))
				.expectError(StorageOverloadedException.class)
				.verify(TIMEOUT))
			.then(() -> assertThat(budget.used()).isEqualTo(50))
			.then(() -> release.tryEmitValue(50))
			.expectNext(50)
			.expectComplete()
			.verify(TIMEOUT);
		assertThat(budget.used()).isZero();
	}

	@Test
	void theSizeLimitStillApplies() {
		BodyBudget budget = new BodyBudget(1000, new SimpleMeterRegistry());
		StepVerifier.create(budget.read(body(30, 30), -1, 40, () -> false, (bytes) -> Mono.just(bytes.length)))
			.expectError(DataBufferLimitException.class)
			.verify(Duration.ofSeconds(5));
		assertThat(budget.used()).isZero();
	}

	/**
	 * A body as Reactor Netty hands it over: filled Netty buffers (byte i of the body is
	 * i), each kept in {@code handedOver} to check that it was released.
	 */
	private static Flux<DataBuffer> nettyBody(List<ByteBuf> handedOver, int... sizes) {
		return Flux.defer(() -> {
			int[] next = { 0 };
			return Flux.fromArray(java.util.Arrays.stream(sizes).boxed().toArray(Integer[]::new)).map((size) -> {
				ByteBuf buffer = Unpooled.buffer(size);
				for (int i = 0; i < size; i++) {
					buffer.writeByte(next[0]++);
				}
				handedOver.add(buffer);
				return NETTY.wrap(buffer);
			});
		});
	}

	private static void assertReleased(List<ByteBuf> buffers) {
		assertThat(buffers).isNotEmpty().allSatisfy((buffer) -> assertThat(buffer.refCnt()).isZero());
	}

	private static byte[] counting(int size) {
		byte[] bytes = new byte[size];
		for (int i = 0; i < size; i++) {
			bytes[i] = (byte) i;
		}
		return bytes;
	}

	@Test
	void nettyBodyOfAnnouncedLengthIsJoinedAndItsReservationReleased() {
		BodyBudget budget = new BodyBudget(100, new SimpleMeterRegistry());
		AtomicLong seenDuringUse = new AtomicLong();
		List<ByteBuf> buffers = new ArrayList<>();
		StepVerifier.create(budget.read(nettyBody(buffers, 30, 20, 10), 60, 1000, () -> false, (bytes) -> {
			seenDuringUse.set(budget.used());
			return Mono.just(bytes);
		})).assertNext((bytes) -> assertThat(bytes).isEqualTo(counting(60))).expectComplete().verify(TIMEOUT);
		assertThat(seenDuringUse).hasValue(60);
		assertThat(budget.used()).isZero();
		assertReleased(buffers);
	}

	@Test
	void chunkedNettyBodyGrowsWithinTheLimitAndBudget() {
		BodyBudget budget = new BodyBudget(1000, new SimpleMeterRegistry());
		AtomicLong seenDuringUse = new AtomicLong();
		StepVerifier
			.create(budget.read(nettyBody(new ArrayList<>(), 10, 10, 10, 10, 5), -1, 64, () -> false, (bytes) -> {
				seenDuringUse.set(budget.used());
				return Mono.just(bytes);
			}))
			.assertNext((bytes) -> assertThat(bytes).isEqualTo(counting(45)))
			.expectComplete()
			.verify(TIMEOUT);
		// Reserved is what is held: the array grew 10, 20, 40 and then to the limit.
		assertThat(seenDuringUse).hasValue(64);
		assertThat(budget.used()).isZero();
	}

	@Test
	void nettyBodyOverTheLimitOrTheBudgetIsRefusedAndReleased() {
		BodyBudget small = new BodyBudget(40, new SimpleMeterRegistry());
		List<ByteBuf> refused = new ArrayList<>();
		StepVerifier.create(small.read(nettyBody(refused, 30, 20), 50, 1000, () -> false, Mono::just))
			.expectError(StorageOverloadedException.class)
			.verify(TIMEOUT);
		assertThat(small.used()).isZero();
		assertReleased(refused);
		BodyBudget large = new BodyBudget(1000, new SimpleMeterRegistry());
		StepVerifier.create(large.read(nettyBody(new ArrayList<>(), 30, 30), -1, 40, () -> false, Mono::just))
			.expectError(DataBufferLimitException.class)
			.verify(TIMEOUT);
		assertThat(large.used()).isZero();
	}

	@Test
	void emptyNettyBodyIsAnEmptyValueAndABodyTheServerRefusedIsNotUsed() {
		BodyBudget budget = new BodyBudget(100, new SimpleMeterRegistry());
		StepVerifier.create(budget.read(nettyBody(new ArrayList<>()), 0, 1000, () -> false, Mono::just))
			.assertNext((bytes) -> assertThat(bytes).isEmpty())
			.expectComplete()
			.verify(TIMEOUT);
		StepVerifier.create(budget.read(nettyBody(new ArrayList<>(), 10), 20, 1000, () -> true, Mono::just))
			.expectError(BodyBudget.MalformedBody.class)
			.verify(TIMEOUT);
		assertThat(budget.used()).isZero();
	}

}
