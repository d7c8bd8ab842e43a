package io.quorumkv.service.paxos;

import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.mockito.Mockito.mock;

import java.time.Clock;
import java.time.Duration;

import io.quorumkv.service.cluster.HybridLogicalClock;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

import org.springframework.util.unit.DataSize;

/**
 * The start-up check of {@code quorumkv.paxos.grace}: an acceptor's purge floor stands in
 * for the commits of the rows it dropped, so a row may go only once every request that
 * could still propose below the floor has settled, which takes up to twice the Paxos
 * timeout plus twice the largest clock skew ({@code Acceptor.purge}, reliability.md §16).
 * A node whose grace is not above that bound must refuse to start, naming the settings.
 */
class PaxosGraceTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	private static final Duration SKEW = Duration.ofMillis(500);

	/** 2 × 5 s + 2 × 500 ms. */
	private static final Duration BOUND = Duration.ofSeconds(11);

	@Test
	void aGraceAtOrBelowTheBoundStopsTheStartNamingTheSettings() {
		assertThatIllegalStateException().isThrownBy(() -> purgeWith(BOUND))
			.withMessageContaining("quorumkv.paxos.grace (PT11S)")
			.withMessageContaining("quorumkv.paxos.timeout")
			.withMessageContaining("quorumkv.cluster.max-clock-skew")
			.withMessageContaining("PT11S");
		assertThatIllegalStateException().isThrownBy(() -> purgeWith(Duration.ofSeconds(10)));
		// Twice the timeout alone is not enough: the skew counts too.
		assertThatIllegalStateException().isThrownBy(() -> purgeWith(TIMEOUT.multipliedBy(2).plusMillis(999)));
	}

	@Test
	void aGraceAboveTheBoundStarts() {
		assertThatNoException().isThrownBy(() -> purgeWith(BOUND.plusMillis(1)).dispose());
		assertThatNoException().isThrownBy(() -> purgeWith(Duration.ofMinutes(1)).dispose());
	}

	private static Disposable purgeWith(Duration grace) {
		PaxosProperties paxos = new PaxosProperties(TIMEOUT, grace, 100, DataSize.ofMegabytes(1));
		HybridLogicalClock clock = HybridLogicalClock.inMemory(Clock.systemUTC(), SKEW);
		return new PaxosConfiguration().acceptorPurge(mock(Acceptor.class), paxos, clock);
	}

}
