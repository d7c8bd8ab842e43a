package io.quorumkv.service.metadata;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

/**
 * The shared view of who is up: learned from the leader's appends, a node down once
 * nothing heard of it for {@code downAfter}, a node seen up again handed on (its breakers
 * close), never moved back by an older view, and malformed entries skipped.
 */
class LivenessTest {

	private static final long DOWN_AFTER_MS = 3000;

	private long nowMs = 1_000_000;

	private final List<String> cameUp = new ArrayList<>();

	private final Liveness liveness = new Liveness(DOWN_AFTER_MS, () -> TimeUnit.MILLISECONDS.toNanos(this.nowMs),
			this.cameUp::add);

	@Test
	void aFollowerLearnsTheLeadersViewAndTheLeaderItself() {
		this.liveness.learn("a", "b=120,c=4000");
		assertThat(this.liveness.of("a")).containsEntry("up", true).containsEntry("heardMsAgo", 0L);
		assertThat(this.liveness.of("b")).containsEntry("up", true)
			.containsEntry("heardMsAgo", 120L)
			.containsEntry("via", "a");
		assertThat(this.liveness.of("c")).containsEntry("up", false).containsEntry("heardMsAgo", 4000L);
		assertThat(this.liveness.of("d")).isNull();
		assertThat(this.cameUp).containsExactly("a", "b");
	}

	@Test
	void aNodeSeenUpAgainAfterItWasDownIsHandedOnOnce() {
		this.liveness.learn("a", "b=100");
		this.cameUp.clear();
		// b stops answering the leader: each view says it was heard longer ago.
		for (long ago = 850; ago <= 5100; ago += 750) {
			this.nowMs += 750;
			this.liveness.learn("a", "b=" + ago);
		}
		assertThat(this.liveness.of("b")).containsEntry("up", false);
		assertThat(this.cameUp).isEmpty();
		// b answers again.
		this.nowMs += 750;
		this.liveness.learn("a", "b=40");
		this.nowMs += 750;
		this.liveness.learn("a", "b=30");
		assertThat(this.liveness.of("b")).containsEntry("up", true).containsEntry("heardMsAgo", 30L);
		assertThat(this.cameUp).containsExactly("b");
	}

	@Test
	void aNodeDownByTimeAloneIsHandedOnWhenHeardAgain() {
		// No view said b was down: the last one that named it came just before the
		// limit, and b was back right after it (a restart of 3 s, SharedLivenessTest).
		this.liveness.learn("a", "b=0");
		this.cameUp.clear();
		this.nowMs += DOWN_AFTER_MS - 10;
		this.liveness.learn("a", "b=" + (DOWN_AFTER_MS - 10));
		this.nowMs += 200;
		assertThat(this.liveness.of("b")).containsEntry("up", false);
		this.liveness.learn("a", "b=5");
		assertThat(this.liveness.of("b")).containsEntry("up", true);
		assertThat(this.cameUp).containsExactly("b");
	}

	@Test
	void anOlderViewNeverMovesANodeBack() {
		this.liveness.learn("a", "b=100");
		this.nowMs += 10_000;
		this.liveness.learn("a", "b=50");
		// A deposed leader that lost b long ago says so later: b stays as the newer view
		// saw it.
		this.nowMs += 100;
		this.liveness.learn("z", "b=9000");
		assertThat(this.liveness.of("b")).containsEntry("up", true)
			.containsEntry("heardMsAgo", 150L)
			.containsEntry("via", "a");
	}

	@Test
	void timePassingWithoutNewsMarksANodeDown() {
		this.liveness.learn("a", "b=0");
		this.nowMs += DOWN_AFTER_MS - 1;
		assertThat(this.liveness.of("b")).containsEntry("up", true);
		this.nowMs += 1;
		assertThat(this.liveness.of("b")).containsEntry("up", false).containsEntry("heardMsAgo", DOWN_AFTER_MS);
		assertThat(this.liveness.of("a")).containsEntry("up", false);
	}

	@Test
	void malformedEntriesAreSkippedAndAnOverlongViewIgnored() {
		this.liveness.learn("a", "=5,b,c=,d=x,e=-3,f=12,g==1,,h=99999999999999999999");
		assertThat(this.liveness.of("f")).containsEntry("heardMsAgo", 12L);
		for (String skipped : List.of("", "b", "c", "d", "e", "g", "h")) {
			assertThat(this.liveness.of(skipped)).as(skipped).isNull();
		}
		this.liveness.learn("a", "x=1," + "y".repeat(Liveness.MAX_HEADER));
		assertThat(this.liveness.of("x")).isNull();
	}

	@Test
	void theLeaderSendsItsViewLearnsItAndReadsRatisAtMostEvery100Ms() {
		AtomicInteger reads = new AtomicInteger();
		Map<String, Long> view = new TreeMap<>(Map.of("b", 200L, "c", 5000L));
		this.liveness.leaderViewFrom(() -> {
			reads.incrementAndGet();
			return view;
		});
		assertThat(this.liveness.header()).isEqualTo("b=200,c=5000");
		assertThat(this.liveness.of("b")).containsEntry("up", true).containsEntry("via", "self");
		assertThat(this.liveness.of("c")).containsEntry("up", false);
		this.nowMs += 99;
		assertThat(this.liveness.header()).isEqualTo("b=200,c=5000");
		assertThat(reads).hasValue(1);
		view.put("c", 10L);
		this.nowMs += 1;
		assertThat(this.liveness.header()).isEqualTo("b=200,c=10");
		assertThat(reads).hasValue(2);
		assertThat(this.cameUp).containsExactly("b", "c");
		// A node that does not lead sends no view.
		this.liveness.leaderViewFrom(Map::of);
		this.nowMs += 100;
		assertThat(this.liveness.header()).isNull();
	}

}
