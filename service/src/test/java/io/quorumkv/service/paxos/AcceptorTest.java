package io.quorumkv.service.paxos;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import io.quorumkv.service.paxos.Messages.Promise;
import io.quorumkv.service.paxos.Messages.Vote;
import io.quorumkv.storage.Entry;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/** The acceptor's rules, one message at a time. */
class AcceptorTest {

	private static final byte[] KEY = "k".getBytes(StandardCharsets.UTF_8);

	private final Map<ByteBuffer, Entry> store = new HashMap<>();

	private long now = 1_000;

	private final Acceptor acceptor = new Acceptor(AcceptorTable.inMemory(100, 1 << 20, 1024),
			(key) -> Mono.justOrEmpty(this.store.get(ByteBuffer.wrap(key))), (micros) -> true, () -> this.now, 3);

	private static Ballot ballot(long micros, String node) {
		return new Ballot(micros, node);
	}

	private static Entry value(String value, long timestamp) {
		return Entry.value(KEY, value.getBytes(StandardCharsets.UTF_8), timestamp);
	}

	@Test
	void promisesOnlyAboveWhatItPromisedAndNamesItWhenItRefuses() {
		assertThat(this.acceptor.prepare(ballot(10, "a"), KEY).block().ok()).isTrue();
		Promise lower = this.acceptor.prepare(ballot(9, "z"), KEY).block();
		assertThat(lower.ok()).isFalse();
		assertThat(lower.promised()).isEqualTo(ballot(10, "a"));
		// The same microsecond from another node is not above: of two ballots of one
		// microsecond at most one gets a majority.
		assertThat(this.acceptor.prepare(ballot(10, "a"), KEY).block().ok()).isFalse();
		assertThat(this.acceptor.prepare(ballot(10, "b"), KEY).block().ok()).isFalse();
		assertThat(this.acceptor.prepare(ballot(11, "0"), KEY).block().ok()).isTrue();
	}

	@Test
	void acceptsAtOrAboveItsPromiseOnlyAndReportsWhatItAccepted() {
		this.acceptor.prepare(ballot(10, "a"), KEY).block();
		Vote below = this.acceptor.propose(new Proposal(ballot(9, "a"), value("x", 9))).block();
		assertThat(below.ok()).isFalse();
		assertThat(below.promised()).isEqualTo(ballot(10, "a"));
		assertThat(this.acceptor.propose(new Proposal(ballot(10, "a"), value("y", 10))).block().ok()).isTrue();
		Promise next = this.acceptor.prepare(ballot(11, "b"), KEY).block();
		assertThat(next.ok()).isTrue();
		assertThat(next.accepted()).isEqualTo(new Proposal(ballot(10, "a"), value("y", 10)));
		// After it, an older ballot's proposal is refused.
		assertThat(this.acceptor.propose(new Proposal(ballot(10, "a"), value("y", 10))).block().ok()).isFalse();
	}

	@Test
	void anAcceptedProposalItsStorageHoldsIsNotInProgressAndTheCurrentEntryComesWhole() {
		this.acceptor.prepare(ballot(10, "a"), KEY).block();
		this.acceptor.propose(new Proposal(ballot(10, "a"), value("y", 10))).block();
		this.store.put(ByteBuffer.wrap(KEY), value("old", 5));
		Promise inProgress = this.acceptor.prepare(ballot(11, "a"), KEY).block();
		assertThat(inProgress.accepted()).isNotNull();
		assertThat(inProgress.versionOnly()).isTrue();
		assertThat(inProgress.current().timestamp()).isEqualTo(5);
		this.store.put(ByteBuffer.wrap(KEY), value("y", 10));
		Promise committed = this.acceptor.prepare(ballot(12, "a"), KEY).block();
		assertThat(committed.accepted()).isNull();
		assertThat(committed.versionOnly()).isFalse();
		assertThat(committed.current()).isEqualTo(value("y", 10));
	}

	@Test
	void aPurgedRowsBallotsBecomeTheFloorBelowWhichNothingIsPromised() {
		this.acceptor.prepare(ballot(10, "a"), KEY).block();
		this.acceptor.propose(new Proposal(ballot(10, "a"), value("y", 10))).block();
		this.now += 60_000;
		// Not stored yet: kept, whatever its age.
		assertThat(this.acceptor.purge(Duration.ofSeconds(1)).block()).isZero();
		this.store.put(ByteBuffer.wrap(KEY), value("y", 10));
		assertThat(this.acceptor.purge(Duration.ofSeconds(1)).block()).isEqualTo(1);
		Promise again = this.acceptor.prepare(ballot(10, "a"), KEY).block();
		assertThat(again.ok()).isFalse();
		assertThat(again.promised()).isEqualTo(ballot(10, "a"));
		byte[] other = "other".getBytes(StandardCharsets.UTF_8);
		assertThat(this.acceptor.prepare(ballot(7, "c"), other).block().ok()).isFalse();
		assertThat(this.acceptor.prepare(ballot(11, "c"), KEY).block().ok()).isTrue();
		// A proposal at the promised ballot itself is accepted, one below it is not.
		assertThat(this.acceptor.propose(new Proposal(ballot(11, "c"), value("z", 11))).block().ok()).isTrue();
		assertThat(this.acceptor.propose(new Proposal(ballot(11, "b"), value("w", 11))).block().ok()).isFalse();
	}

}
