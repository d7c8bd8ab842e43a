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
	void anAcceptedProposalIsReportedUntilItsCommitIsRecordedWhichNeedsTheEntryStored() {
		this.acceptor.prepare(ballot(10, "a"), KEY).block();
		this.acceptor.propose(new Proposal(ballot(10, "a"), value("y", 10))).block();
		this.store.put(ByteBuffer.wrap(KEY), value("old", 5));
		Promise inProgress = this.acceptor.prepare(ballot(11, "a"), KEY).block();
		assertThat(inProgress.accepted()).isNotNull();
		assertThat(inProgress.versionOnly()).isTrue();
		assertThat(inProgress.current().timestamp()).isEqualTo(5);
		assertThat(inProgress.commit()).isEqualTo(Ballot.NONE);
		// Not stored here yet: a commit is not recorded.
		assertThat(this.acceptor.commit(ballot(10, "a"), KEY, 10).block()).isFalse();
		this.store.put(ByteBuffer.wrap(KEY), value("y", 10));
		// Stored, but its commit not recorded: still reported (its ballot tells the
		// coordinator whether it is in progress, not the storage's version).
		Promise stored = this.acceptor.prepare(ballot(12, "a"), KEY).block();
		assertThat(stored.accepted()).isEqualTo(new Proposal(ballot(10, "a"), value("y", 10)));
		assertThat(this.acceptor.commit(ballot(10, "a"), KEY, 10).block()).isTrue();
		Promise committed = this.acceptor.prepare(ballot(13, "a"), KEY).block();
		assertThat(committed.accepted()).isNull();
		assertThat(committed.versionOnly()).isFalse();
		assertThat(committed.current()).isEqualTo(value("y", 10));
		assertThat(committed.commit()).isEqualTo(ballot(10, "a"));
	}

	@Test
	void aRecordedCommitRaisesThePromiseAndAnOlderOneChangesNothing() {
		this.acceptor.prepare(ballot(10, "a"), KEY).block();
		this.store.put(ByteBuffer.wrap(KEY), value("z", 15));
		assertThat(this.acceptor.commit(ballot(20, "b"), KEY, 15).block()).isTrue();
		assertThat(this.acceptor.commit(ballot(12, "c"), KEY, 15).block()).isTrue();
		Promise below = this.acceptor.prepare(ballot(20, "z"), KEY).block();
		assertThat(below.ok()).isFalse();
		assertThat(below.promised()).isEqualTo(ballot(20, "b"));
		assertThat(this.acceptor.prepare(ballot(21, "a"), KEY).block().commit()).isEqualTo(ballot(20, "b"));
	}

	@Test
	void aRowIsPurgedOnlyOnceItsProposalIsCommittedAndItsBallotsBecomeTheFloor() {
		this.acceptor.prepare(ballot(10, "a"), KEY).block();
		this.acceptor.propose(new Proposal(ballot(10, "a"), value("y", 10))).block();
		this.now += 60_000;
		// Not committed: kept, whatever its age, also once stored.
		assertThat(this.acceptor.purge(Duration.ofSeconds(1)).block()).isZero();
		this.store.put(ByteBuffer.wrap(KEY), value("y", 10));
		assertThat(this.acceptor.purge(Duration.ofSeconds(1)).block()).isZero();
		assertThat(this.acceptor.commit(ballot(10, "a"), KEY, 10).block()).isTrue();
		// The commit touched the row: the grace period starts again.
		assertThat(this.acceptor.purge(Duration.ofSeconds(1)).block()).isZero();
		this.now += 60_000;
		assertThat(this.acceptor.purge(Duration.ofSeconds(1)).block()).isEqualTo(1);
		Promise again = this.acceptor.prepare(ballot(10, "a"), KEY).block();
		assertThat(again.ok()).isFalse();
		assertThat(again.promised()).isEqualTo(ballot(10, "a"));
		byte[] other = "other".getBytes(StandardCharsets.UTF_8);
		assertThat(this.acceptor.prepare(ballot(7, "c"), other).block().ok()).isFalse();
		// A key without a row counts as committed at the floor.
		Promise above = this.acceptor.prepare(ballot(11, "c"), KEY).block();
		assertThat(above.ok()).isTrue();
		assertThat(above.accepted()).isNull();
		assertThat(above.commit()).isEqualTo(ballot(10, "a"));
		// A proposal at the promised ballot itself is accepted, one below it is not.
		assertThat(this.acceptor.propose(new Proposal(ballot(11, "c"), value("z", 11))).block().ok()).isTrue();
		assertThat(this.acceptor.propose(new Proposal(ballot(11, "b"), value("w", 11))).block().ok()).isFalse();
		// The floor is the commit of the row made since: its proposal is reported.
		assertThat(this.acceptor.prepare(ballot(12, "c"), KEY).block().accepted())
			.isEqualTo(new Proposal(ballot(11, "c"), value("z", 11)));
	}

}
