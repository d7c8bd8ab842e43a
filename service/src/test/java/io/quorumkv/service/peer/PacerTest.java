package io.quorumkv.service.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The one rate of background streams: a transfer's bytes (both ends) and repair's
 * entries.
 */
class PacerTest {

	@Test
	void holdsItsRateOverManyPieces() {
		Pacer pacer = new Pacer(1_000_000, Duration.ofMillis(10), Schedulers.parallel());
		long start = System.nanoTime();
		for (int i = 0; i < 50; i++) {
			pacer.delay(10_000).block(Duration.ofSeconds(5));
		}
		long millis = (System.nanoTime() - start) / 1_000_000;
		// 500 KB at 1 MB/s: the last piece goes at 490 ms, up to 10 ms early.
		assertThat(millis).isBetween(470L, 2_000L);
	}

	@Test
	void aPieceWithinTheSlackGoesAtOnceWithoutATimer() {
		Pacer pacer = new Pacer(1_000_000, Duration.ofMillis(10), Schedulers.parallel());
		assertThat(pacer.delay(5_000)).isSameAs(Mono.empty());
		// Due 5 ms from the first at most (less as time passes): within the slack.
		assertThat(pacer.delay(1_000_000)).isSameAs(Mono.empty());
		assertThat(pacer.delay(1_000)).as("due about 1 s from the first").isNotSameAs(Mono.empty());
	}

	@Test
	void timeNotUsedIsNotSavedUpForABurst() throws InterruptedException {
		Pacer pacer = new Pacer(1_000_000, Duration.ZERO, Schedulers.parallel());
		assertThat(pacer.delay(1_000)).isSameAs(Mono.empty());
		Thread.sleep(200);
		// 200 ms idle would be 200 KB of credit; the second of two 100 KB pieces still
		// waits for the first's 100 ms.
		assertThat(pacer.delay(100_000)).isSameAs(Mono.empty());
		assertThat(pacer.delay(100_000)).isNotSameAs(Mono.empty());
	}

	@Test
	void elementsOfAFluxGoNoFasterThanTheRate() {
		Pacer pacer = new Pacer(10_000, Duration.ZERO, Schedulers.parallel());
		long start = System.nanoTime();
		Long count = pacer.paced(Flux.range(0, 5_000)).count().block(Duration.ofSeconds(30));
		long millis = (System.nanoTime() - start) / 1_000_000;
		assertThat(count).isEqualTo(5_000);
		// 5,000 at 10,000 a second: half a second, less the one batch that may go at
		// once.
		assertThat(millis).isGreaterThanOrEqualTo(440);
	}

	@Test
	void zeroMeansNoLimitAndANegativeRateIsRefused() {
		Pacer pacer = new Pacer(0, Duration.ZERO, Schedulers.parallel());
		long start = System.nanoTime();
		assertThat(pacer.paced(Flux.range(0, 100_000)).count().block(Duration.ofSeconds(30))).isEqualTo(100_000);
		assertThat(pacer.delay(Long.MAX_VALUE / 2)).isSameAs(Mono.empty());
		assertThat(System.nanoTime() - start).isLessThan(Duration.ofSeconds(5).toNanos());
		assertThatIllegalArgumentException().isThrownBy(() -> new Pacer(-1, Duration.ZERO, Schedulers.parallel()))
			.withMessageContaining("negative");
	}

}
