package io.quorumkv.service.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

class PeerClocksTest {

	final Node peer = Node.of("http://127.0.0.1:9001");

	final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	final PeerClocks clocks = new PeerClocks(List.of(this.peer), Duration.ofMinutes(1), this.meters);

	@Test
	void theOffsetIsThePeersClockMinusTheMiddleOfTheRoundTrip() {
		assertThat(this.clocks.offset(this.peer.id())).isEmpty();
		// sent at 1000, answered at 1200: the peer read its clock at about 1100.
		this.clocks.sample(this.peer.id(), 1_000, 1_200, 3_600_001_100L);
		PeerClocks.Offset offset = this.clocks.offset(this.peer.id()).orElseThrow();
		assertThat(offset.offsetMicros()).isEqualTo(3_600_000_000L);
		assertThat(offset.errorMicros()).isEqualTo(100);
		assertThat(this.meters.get("quorumkv.clock.offset").tag("peer", this.peer.id()).gauge().value())
			.isEqualTo(3600.0);
	}

	@Test
	void theShortestRoundTripWins() {
		this.clocks.sample(this.peer.id(), 0, 100_000, 90_000);
		this.clocks.sample(this.peer.id(), 200_000, 200_400, 200_700);
		this.clocks.sample(this.peer.id(), 300_000, 350_000, 300_000);
		assertThat(this.clocks.offset(this.peer.id()).orElseThrow().offsetMicros()).isEqualTo(500);
	}

	@Test
	void aPeerThatJoinedIsMeasuredFromItsFirstSampleAndImpossibleSamplesAreIgnored() {
		this.clocks.sample("http://elsewhere:1", 0, 10, 5);
		this.clocks.sample(this.peer.id(), 10, 5, 5);
		assertThat(this.clocks.offsets()).containsOnlyKeys(this.peer.id(), "http://elsewhere:1");
		assertThat(this.clocks.offset(this.peer.id())).isEmpty();
		assertThat(this.clocks.offset("http://elsewhere:1").orElseThrow().offsetMicros()).isZero();
		assertThat(this.meters.get("quorumkv.clock.offset").tag("peer", "http://elsewhere:1").gauge()).isNotNull();
	}

}
