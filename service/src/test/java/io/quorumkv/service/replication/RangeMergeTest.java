package io.quorumkv.service.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import io.quorumkv.storage.Keys;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * The paged merge of a range read ({@link RangeMerge}) against a model: the members'
 * entries merged whole, the greatest per key, tombstones dropped. Members here are sorted
 * maps that answer pages and count what they were asked for and what they sent.
 */
class RangeMergeTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	@Property(tries = 500)
	void anyMembersAnyPageSizeAndLimitGiveTheModelsLiveEntries(@ForAll long seed,
			@ForAll @IntRange(min = 0, max = 5) int memberCount, @ForAll @IntRange(min = 1, max = 12) int pageSize,
			@ForAll @IntRange(min = 1, max = 120) int limit, @ForAll @IntRange(min = 0, max = 60) int startKey) {
		Random random = new Random(seed);
		int keys = 1 + random.nextInt(100);
		List<FakeMember> members = new ArrayList<>();
		for (int m = 0; m < memberCount; m++) {
			FakeMember member = new FakeMember();
			// Each member holds its own share of the keys, some of them deleted, in
			// versions that may be older or newer than another member's.
			double share = random.nextDouble();
			for (int k = 0; k < keys; k++) {
				if (random.nextDouble() < share) {
					long timestamp = 1 + random.nextInt(4);
					member.put((random.nextInt(4) == 0) ? Entry.tombstone(key(k), timestamp)
							: Entry.value(key(k), bytes("v" + random.nextInt(3)), timestamp));
				}
			}
			members.add(member);
		}

		List<Entry> merged = RangeMerge.merge(List.copyOf(members), key(startKey), pageSize, 0, limit)
			.collectList()
			.block(TIMEOUT);

		assertThat(merged).isEqualTo(model(members, key(startKey), limit));
		for (FakeMember member : members) {
			assertThat(member.pageLimits).allMatch((asked) -> asked == pageSize);
			// Asked again only after a full page: at most one page per pageSize entries
			// it holds from the start, plus the one that comes back short.
			assertThat(member.pageLimits.size()).isLessThanOrEqualTo(member.from(key(startKey)) / pageSize + 1);
		}
	}

	@Test
	void tombstonesOnOneMemberHideTheRowsOfAnother() {
		FakeMember deletes = new FakeMember();
		FakeMember values = new FakeMember();
		for (int k = 0; k < 200; k++) {
			values.put(Entry.value(key(k), bytes("v" + k), 1));
			if (k < 100) {
				deletes.put(Entry.tombstone(key(k), 2));
			}
		}
		List<Entry> merged = merge(List.of(deletes, values), key(0), 16, 10);
		assertThat(merged).extracting(RangeMergeTest::text).containsExactly(range(100, 110));
		// The deleted hundred came page by page from both, never the rest of the range.
		assertThat(values.sent.get()).isLessThanOrEqualTo(110 + 16 + RangeMerge.PREFETCH);
	}

	@Test
	void aMemberWithNewerVersionsWinsAndAnOlderTombstoneHidesNothing() {
		FakeMember older = new FakeMember();
		FakeMember newer = new FakeMember();
		for (int k = 0; k < 50; k++) {
			older.put(Entry.value(key(k), bytes("old"), 1));
			newer.put((k % 10 == 0) ? Entry.value(key(k), bytes("new"), 2) : Entry.tombstone(key(k), 0));
		}
		List<Entry> merged = merge(List.of(older, newer), key(0), 7, Long.MAX_VALUE);
		assertThat(merged).hasSize(50);
		assertThat(merged).filteredOn((entry) -> new String(entry.value(), StandardCharsets.UTF_8).equals("new"))
			.extracting(RangeMergeTest::text)
			.containsExactly(text(key(0)), text(key(10)), text(key(20)), text(key(30)), text(key(40)));
	}

	@Test
	void aMemberExhaustedEarlyIsAskedOnceAndTheOthersGoOn() {
		FakeMember shortOne = new FakeMember();
		FakeMember longOne = new FakeMember();
		for (int k = 0; k < 100; k++) {
			if (k < 3) {
				shortOne.put(Entry.value(key(k), bytes("s"), 5));
			}
			longOne.put(Entry.value(key(k), bytes("l"), 1));
		}
		List<Entry> merged = merge(List.of(shortOne, longOne), key(0), 10, Long.MAX_VALUE);
		assertThat(merged).extracting(RangeMergeTest::text).containsExactly(range(0, 100));
		assertThat(merged.subList(0, 3)).allMatch((entry) -> entry.timestamp() == 5);
		assertThat(shortOne.pageLimits).hasSize(1);
		// 100 entries in pages of 10: ten full pages and an empty one.
		assertThat(longOne.pageLimits).hasSize(11);
		assertThat(longOne.pageStarts.get(1)).isEqualTo(RangeMerge.successor(key(9)));
	}

	@Test
	void pagesEndingAtDifferentKeysMergeInOrder() {
		FakeMember evens = new FakeMember();
		FakeMember threes = new FakeMember();
		FakeMember late = new FakeMember();
		for (int k = 0; k < 90; k++) {
			if (k % 2 == 0) {
				evens.put(Entry.value(key(k), bytes("e"), 1));
			}
			if (k % 3 == 0) {
				threes.put(Entry.value(key(k), bytes("t"), 2));
			}
			if (k >= 60) {
				late.put(Entry.tombstone(key(k), (k % 4 == 0) ? 3 : 0));
			}
		}
		List<FakeMember> members = List.of(evens, threes, late);
		List<Entry> merged = merge(members, key(0), 4, Long.MAX_VALUE);
		assertThat(merged).isEqualTo(model(members, key(0), Long.MAX_VALUE));
		assertThat(merged).extracting(RangeMergeTest::text).doesNotContain(text(key(60)), text(key(64)));
	}

	@Test
	void aValueExpiredWhenTheRangeStartsHidesTheOlderVersionsOfItsKeyAndDoesNotCountToTheLimit() {
		FakeMember older = new FakeMember();
		FakeMember newer = new FakeMember();
		for (int k = 0; k < 30; k++) {
			older.put(Entry.value(key(k), bytes("old"), 1));
			// Even keys: a newer value that expired at 100; odd keys: one that expires at
			// 300.
			newer.put(Entry.expiring(key(k), bytes("new"), 2, (k % 2 == 0) ? 100 : 300));
		}
		List<Entry> merged = RangeMerge.merge(List.of(older, newer), key(0), 4, 0, 10, 200)
			.collectList()
			.block(TIMEOUT);
		List<String> odd = new ArrayList<>();
		for (int k = 1; k < 20; k += 2) {
			odd.add(text(key(k)));
		}
		assertThat(merged).extracting(RangeMergeTest::text).containsExactlyElementsOf(odd);
		assertThat(merged).allSatisfy((entry) -> assertThat(new String(entry.value())).isEqualTo("new"));
	}

	@Test
	void aLimitReachedExactlyAtAPageBoundaryEndsThere() {
		FakeMember member = new FakeMember();
		for (int k = 0; k < 40; k++) {
			member.put(Entry.value(key(k), bytes("v"), 1));
		}
		StepVerifier.create(RangeMerge.merge(List.of(member), key(0), 8, 0, 16))
			.expectNextCount(16)
			.expectComplete()
			.verify(TIMEOUT);
		assertThat(member.pageStarts).hasSizeLessThanOrEqualTo(3);
		assertThat(merge(List.of(member), key(0), 8, 16)).extracting(RangeMergeTest::text)
			.containsExactly(range(0, 16));
		// The whole range ends at a page boundary too: 40 entries, five full pages, then
		// one that comes back empty.
		member.pageStarts.clear();
		assertThat(merge(List.of(member), key(0), 8, Long.MAX_VALUE)).hasSize(40);
		assertThat(member.pageStarts).hasSize(6);
	}

	@Test
	void emptyMembersGiveNothingOrLeaveTheOthersAlone() {
		assertThat(merge(List.of(), key(0), 8, 10)).isEmpty();
		assertThat(merge(List.of(new FakeMember(), new FakeMember()), key(0), 8, 10)).isEmpty();
		FakeMember one = new FakeMember();
		one.put(Entry.value(key(1), bytes("v"), 1));
		FakeMember empty = new FakeMember();
		assertThat(merge(List.of(empty, one), key(0), 8, 10)).extracting(RangeMergeTest::text)
			.containsExactly(text(key(1)));
		assertThat(empty.pageLimits).hasSize(1);
	}

	@Test
	void aShortScanOverALargeRangeAsksEachMemberForOneBoundedPage() {
		ScanProperties scan = new Binder(new MapConfigurationPropertySource(Map.of()))
			.bindOrCreate("quorumkv.cluster.scan", ScanProperties.class);
		int pageSize = scan.pageSize(10);
		assertThat(pageSize).isEqualTo(74);
		List<FakeMember> members = List.of(new FakeMember(), new FakeMember(), new FakeMember());
		for (int k = 0; k < 10_000; k++) {
			for (FakeMember member : members) {
				member.put(Entry.value(key(k), bytes("v"), 1));
			}
		}
		assertThat(merge(members, key(0), pageSize, 10)).extracting(RangeMergeTest::text).containsExactly(range(0, 10));
		for (FakeMember member : members) {
			assertThat(member.pageLimits).containsExactly(74);
			assertThat(member.sent.get()).isLessThanOrEqualTo(74);
		}
		// Without a limit, pages of the largest size.
		assertThat(scan.pageSize(Long.MAX_VALUE)).isEqualTo(1000);
		assertThat(scan.pageSize(1)).isEqualTo(65);
		assertThat(scan.pageSize(5000)).isEqualTo(1000);
	}

	@Test
	void aFailingMemberIsLeftOutWithinTheToleranceAndFailsTheRangeBeyondIt() {
		FakeMember healthy = new FakeMember();
		FakeMember failing = new FakeMember();
		for (int k = 0; k < 30; k++) {
			healthy.put(Entry.value(key(k), bytes("h"), 1));
			failing.put(Entry.value(key(k), bytes("f"), 2));
		}
		failing.failFromPage = 1;
		List<Entry> merged = RangeMerge.merge(List.of(healthy, failing), key(0), 5, 1, Long.MAX_VALUE)
			.collectList()
			.block(TIMEOUT);
		// What the failing member sent before its failure still won its keys.
		assertThat(merged).hasSize(30);
		assertThat(merged.subList(0, 5)).allMatch((entry) -> entry.timestamp() == 2);
		assertThat(merged.subList(5, 30)).allMatch((entry) -> entry.timestamp() == 1);
		StepVerifier.create(RangeMerge.merge(List.of(healthy, failing), key(0), 5, 0, Long.MAX_VALUE))
			.thenConsumeWhile((entry) -> true)
			.expectErrorMessage("member down")
			.verify(TIMEOUT);
	}

	@Test
	void aMemberAnsweringOutOfOrderFailsLikeOneThatStoppedAnswering() {
		RangeMerge.Member backwards = (from, limit) -> Flux.just(Entry.value(key(5), bytes("v"), 1),
				Entry.value(key(4), bytes("v"), 1));
		StepVerifier.create(RangeMerge.merge(List.of(backwards), key(0), 10, 0, Long.MAX_VALUE))
			.expectNextMatches((entry) -> text(entry).equals(text(key(5))))
			.expectError(IllegalStateException.class)
			.verify(TIMEOUT);
	}

	/**
	 * The model: every member's entries at once, the greatest per key, live ones only.
	 */
	private static List<Entry> model(List<FakeMember> members, byte[] from, long limit) {
		TreeMap<byte[], Entry> winners = new TreeMap<>(Keys.ORDER);
		for (FakeMember member : members) {
			for (Entry entry : member.entries.tailMap(from, true).values()) {
				winners.merge(entry.key(), entry, (a, b) -> EntryOrder.max(a, b));
			}
		}
		return winners.values().stream().filter((entry) -> !entry.isTombstone()).limit(limit).toList();
	}

	private static List<Entry> merge(List<FakeMember> members, byte[] from, int pageSize, long limit) {
		return RangeMerge.merge(List.copyOf(members), from, pageSize, 0, limit).collectList().block(TIMEOUT);
	}

	private static byte[] key(int k) {
		return bytes(String.format("k%03d", k));
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	private static String text(Entry entry) {
		return text(entry.key());
	}

	private static String text(byte[] key) {
		return new String(key, StandardCharsets.UTF_8);
	}

	private static String[] range(int from, int to) {
		String[] keys = new String[to - from];
		for (int k = from; k < to; k++) {
			keys[k - from] = text(key(k));
		}
		return keys;
	}

	/** A member over a sorted map: answers pages with backpressure and counts them. */
	private static final class FakeMember implements RangeMerge.Member {

		final TreeMap<byte[], Entry> entries = new TreeMap<>(Keys.ORDER);

		final List<Integer> pageLimits = new ArrayList<>();

		final List<byte[]> pageStarts = new ArrayList<>();

		final AtomicInteger sent = new AtomicInteger();

		/** The page (counted from 0) from which on every page fails; -1: none. */
		int failFromPage = -1;

		void put(Entry entry) {
			this.entries.merge(entry.key(), entry, (a, b) -> EntryOrder.max(a, b));
		}

		int from(byte[] start) {
			return this.entries.tailMap(start, true).size();
		}

		@Override
		public Flux<Entry> page(byte[] fromInclusive, int limit) {
			return Flux.defer(() -> {
				this.pageLimits.add(limit);
				this.pageStarts.add(fromInclusive);
				if (this.failFromPage >= 0 && this.pageLimits.size() > this.failFromPage) {
					return Flux.error(new IllegalStateException("member down"));
				}
				List<Entry> page = this.entries.tailMap(fromInclusive, true).values().stream().limit(limit).toList();
				return Flux.fromIterable(page).doOnNext((entry) -> this.sent.incrementAndGet());
			});
		}

		@Override
		public String toString() {
			return "member of " + this.entries.size();
		}

	}

}
