package io.quorumkv.service.repair;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

class PacerTest {

	@Test
	void entriesGoNoFasterThanTheRate() {
		Pacer pacer = new Pacer(10_000, Schedulers.parallel());
		long start = System.nanoTime();
		Long count = pacer.paced(Flux.range(0, 5_000)).count().block(Duration.ofSeconds(30));
		long millis = (System.nanoTime() - start) / 1_000_000;
		assertThat(count).isEqualTo(5_000);
		// 5,000 at 10,000 a second: half a second, less the one batch that may go at
		// once.
		assertThat(millis).isGreaterThanOrEqualTo(440);
	}

	@Test
	void zeroMeansNoLimit() {
		Pacer pacer = new Pacer(0, Schedulers.parallel());
		long start = System.nanoTime();
		assertThat(pacer.paced(Flux.range(0, 100_000)).count().block(Duration.ofSeconds(30))).isEqualTo(100_000);
		assertThat(System.nanoTime() - start).isLessThan(Duration.ofSeconds(5).toNanos());
	}

}
