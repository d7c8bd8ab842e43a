package io.quorumkv.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

class ThrottleTest {

	@Test
	void eachReservationWaitsForTheOnesBeforeIt() {
		Throttle throttle = new Throttle(1_000);
		assertThat(throttle.reserve(10_000)).as("the first goes at once").isZero();
		// 10,000 units at 1,000 a second take 10 s: the next one waits for them (less the
		// moments between the two calls).
		long wait = throttle.reserve(10_000);
		assertThat(wait).isBetween(TimeUnit.SECONDS.toNanos(9), TimeUnit.SECONDS.toNanos(10));
		assertThat(throttle.reserve(1)).isGreaterThan(wait);
	}

	@Test
	void timeNotUsedIsNotSavedUp() throws InterruptedException {
		Throttle throttle = new Throttle(1_000);
		throttle.reserve(10);
		Thread.sleep(50);
		// 40 ms idle after a 10 ms reservation: the next goes at once, the one after it
		// waits its full share rather than spending the idle time.
		assertThat(throttle.reserve(10_000)).isZero();
		assertThat(throttle.reserve(1)).isGreaterThan(TimeUnit.SECONDS.toNanos(9));
	}

	@Test
	void anUnlimitedThrottleNeverWaitsAndLeavesAFluxAlone() {
		Throttle throttle = new Throttle(Throttle.UNLIMITED);
		assertThat(throttle.unlimited()).isTrue();
		assertThat(throttle.reserve(Long.MAX_VALUE / 2)).isZero();
		assertThat(throttle.reserve(Long.MAX_VALUE / 2)).isZero();
		Flux<Integer> source = Flux.range(0, 3);
		assertThat(throttle.pace(source)).isSameAs(source);
	}

	@Test
	void aChunkIsAboutTenMillisecondsOfTheRate() {
		assertThat(new Throttle(1).chunk()).isEqualTo(1);
		assertThat(new Throttle(1_000).chunk()).isEqualTo(10);
		assertThat(new Throttle(50_000).chunk()).isEqualTo(500);
		assertThat(new Throttle(10_000_000).chunk()).isEqualTo(1_024);
	}

	@Test
	void aRateThatIsNotPositiveIsRefused() {
		assertThatThrownBy(() -> new Throttle(0)).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("positive");
		assertThatThrownBy(() -> new Throttle(-5)).isInstanceOf(IllegalArgumentException.class);
	}

	@Test
	void acquireBlocksForTheShareAndStopsWhenAsked() {
		Throttle throttle = new Throttle(100);
		assertThat(throttle.acquire(20, () -> false)).isTrue();
		long start = System.nanoTime();
		// 20 units at 100 a second were reserved before: 200 ms.
		assertThat(throttle.acquire(1, () -> false)).isTrue();
		assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(150));

		AtomicInteger asked = new AtomicInteger();
		start = System.nanoTime();
		// 10 s due: a stop asked after the second wait of at most 50 ms ends it early.
		throttle.reserve(1_000);
		assertThat(throttle.acquire(1, () -> asked.incrementAndGet() >= 2)).isFalse();
		assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(2));
	}

	@Test
	void aPacedFluxKeepsItsElementsAndTheirOrderAtTheRate() {
		long start = System.nanoTime();
		// 300 elements at 1,000 a second, in chunks of 10: about 0.29 s at least.
		assertThat(new Throttle(1_000).pace(Flux.range(0, 300)).collectList().block(Duration.ofSeconds(10)))
			.containsExactlyElementsOf(Flux.range(0, 300).toIterable());
		assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(250));
	}

}
