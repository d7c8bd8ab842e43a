package io.quorumkv.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quorumkv.storage.StorageOverloadedException;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;

class BodyBudgetTest {

	private static Flux<DataBuffer> body(int... sizes) {
		return Flux.fromArray(java.util.Arrays.stream(sizes).boxed().toArray(Integer[]::new))
			.map((size) -> DefaultDataBufferFactory.sharedInstance.wrap(new byte[size]));
	}

	@Test
	void bytesCountUntilTheirUseCompletesThenAreReleased() {
		BodyBudget budget = new BodyBudget(100, new SimpleMeterRegistry());
		AtomicLong seenDuringUse = new AtomicLong();
		StepVerifier.create(budget.read(body(30, 20), 1000, () -> false, (bytes) -> Mono.fromSupplier(() -> {
			seenDuringUse.set(budget.used());
			return bytes.length;
		}))).expectNext(50).expectComplete().verify(Duration.ofSeconds(5));
		assertThat(seenDuringUse).hasValue(50);
		assertThat(budget.used()).isZero();
	}

	@Test
	void aBodyThatWouldExceedTheBudgetIsRefusedAndReleased() {
		BodyBudget budget = new BodyBudget(40, new SimpleMeterRegistry());
		StepVerifier.create(budget.read(body(30, 20), 1000, () -> false, (bytes) -> Mono.just(bytes.length)))
			.expectError(StorageOverloadedException.class)
			.verify(Duration.ofSeconds(5));
		assertThat(budget.used()).isZero();
	}

	@Test
	void concurrentBodiesShareTheBudget() {
		BodyBudget budget = new BodyBudget(60, new SimpleMeterRegistry());
		Mono<Integer> held = budget.read(body(50), 1000, () -> false,
				(bytes) -> Mono.just(bytes.length).delayElement(Duration.ofMillis(300)));
		Mono<Integer> second = Mono.delay(Duration.ofMillis(100))
			.then(budget.read(body(20), 1000, () -> false, (bytes) -> Mono.just(bytes.length)));
		StepVerifier.create(Flux.merge(held, second.onErrorReturn(StorageOverloadedException.class, -1)))
			.expectNext(-1, 50)
			.expectComplete()
			.verify(Duration.ofSeconds(5));
		assertThat(budget.used()).isZero();
	}

	@Test
	void theSizeLimitStillApplies() {
		BodyBudget budget = new BodyBudget(1000, new SimpleMeterRegistry());
		StepVerifier.create(budget.read(body(30, 30), 40, () -> false, (bytes) -> Mono.just(bytes.length)))
			.expectError(DataBufferLimitException.class)
			.verify(Duration.ofSeconds(5));
		assertThat(budget.used()).isZero();
	}

}
