package io.quorumkv.service.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.quorumkv.storage.Entry;
import org.junit.jupiter.api.Test;

class QuorumRoundTest {

	private final List<String> events = new ArrayList<>();

	private QuorumRound round(int ack, int from) {
		return new QuorumRound(new Replicas(ack, from), (r) -> this.events.add("quorum"),
				(r) -> this.events.add("lost"), (r) -> this.events.add("all"));
	}

	@Test
	void quorumIsDecidedAtTheAckthSuccessWithoutWaitingForStragglers() {
		QuorumRound round = round(2, 3);
		round.succeeded(0, Optional.empty());
		assertThat(this.events).isEmpty();
		round.succeeded(2, Optional.of(Entry.value("k".getBytes(), "v".getBytes(), 5)));
		assertThat(this.events).containsExactly("quorum");
		round.failed(1, "test failure");
		assertThat(this.events).containsExactly("quorum", "all");
	}

	@Test
	void quorumIsLostAsSoonAsAckIsOutOfReach() {
		QuorumRound round = round(3, 3);
		round.failed(1, "test failure");
		assertThat(this.events).containsExactly("lost");
		round.succeeded(0, Optional.empty());
		round.succeeded(2, Optional.empty());
		assertThat(this.events).containsExactly("lost", "all");
	}

	@Test
	void winnerFollowsTheEntryOrder() {
		QuorumRound round = round(1, 3);
		byte[] key = "k".getBytes();
		round.succeeded(0, Optional.of(Entry.value(key, "old".getBytes(), 1)));
		round.succeeded(1, Optional.of(Entry.tombstone(key, 2)));
		round.succeeded(2, Optional.empty());
		assertThat(round.winner()).isEqualTo(Entry.tombstone(key, 2));
		assertThat(this.events).containsExactly("quorum", "all");
	}

	@Test
	void ackOfOneFailsOnlyWhenEveryReplicaFailed() {
		QuorumRound round = round(1, 2);
		round.failed(0, "test failure");
		assertThat(this.events).isEmpty();
		round.failed(1, "test failure");
		assertThat(this.events).containsExactly("lost", "all");
		assertThat(round.hasFailed(0)).isTrue();
	}

}
