package io.quorumkv.service.membership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The byte rate both ends of a transfer keep: the target for what it writes, the source
 * for what it sends.
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
	void aRateIsPositive() {
		assertThatIllegalArgumentException().isThrownBy(() -> new Pacer(0, Duration.ZERO, Schedulers.parallel()))
			.withMessageContaining("positive");
	}

}
