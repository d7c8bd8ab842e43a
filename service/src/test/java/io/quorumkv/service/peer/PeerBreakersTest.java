package io.quorumkv.service.peer;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quorumkv.service.cluster.Node;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The breakers' metrics: each peer's state and failure rate under Resilience4j's names,
 * read at scrape time, and no meter fed per call (the replica streams time every call).
 */
class PeerBreakersTest {

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final PeerBreakers breakers = new PeerBreakers(new BreakerProperties(50, 4, 4, Duration.ofMinutes(1), 1),
			this.meters);

	private final Node peer = Node.of("http://127.0.0.1:1");

	@Test
	void aPeersStateAndFailureRateAreGauges() {
		CircuitBreaker breaker = this.breakers.of(this.peer);
		assertThat(state("closed")).isEqualTo(1);
		assertThat(state("open")).isZero();
		for (int i = 0; i < 4; i++) {
			breaker.onError(1, TimeUnit.MILLISECONDS, new PeerException("down"));
		}
		assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
		assertThat(state("open")).isEqualTo(1);
		assertThat(state("closed")).isZero();
		assertThat(
				this.meters.get("resilience4j.circuitbreaker.failure.rate").tag("name", this.peer.id()).gauge().value())
			.isEqualTo(100);
		this.breakers.close(this.peer.id());
		assertThat(state("closed")).isEqualTo(1);
	}

	@Test
	void noMeterIsFedPerCall() {
		CircuitBreaker breaker = this.breakers.of(this.peer);
		breaker.onSuccess(1, TimeUnit.MILLISECONDS);
		assertThat(this.meters.find("resilience4j.circuitbreaker.calls").meters()).isEmpty();
		assertThat(this.meters.find("resilience4j.circuitbreaker.not.permitted.calls").meters()).isEmpty();
		assertThat(this.meters.get("resilience4j.circuitbreaker.buffered.calls")
			.tag("name", this.peer.id())
			.tag("kind", "successful")
			.gauge()
			.value()).isEqualTo(1);
	}

	private double state(String state) {
		return this.meters.get("resilience4j.circuitbreaker.state")
			.tag("name", this.peer.id())
			.tag("state", state)
			.gauge()
			.value();
	}

}
