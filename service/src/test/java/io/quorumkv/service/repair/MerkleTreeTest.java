package io.quorumkv.service.repair;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import com.dynatrace.hash4j.hashing.HashValue128;
import io.quorumkv.storage.Entry;
import org.junit.jupiter.api.Test;

class MerkleTreeTest {

	@Test
	void theSplitCoversTheWholeTokenSpaceWithoutGapsOrOverlaps() {
		for (int count : new int[] { 1, 3, 16, 1000 }) {
			List<TokenRange> ranges = TokenRange.split(count);
			assertThat(ranges).hasSize(count);
			assertThat(ranges.getFirst().start()).isEqualTo(Long.MIN_VALUE);
			assertThat(ranges.getLast().end()).isEqualTo(Long.MAX_VALUE);
			for (int i = 1; i < count; i++) {
				assertThat(ranges.get(i).start()).isEqualTo(ranges.get(i - 1).end() + 1);
			}
		}
	}

	@Test
	void everyTokenOfARangeFallsInALeafOfItsTree() {
		for (TokenRange range : List.of(new TokenRange(Long.MIN_VALUE, Long.MAX_VALUE), TokenRange.split(3).get(1),
				new TokenRange(5, 5), new TokenRange(-7, 1000))) {
			MerkleTree tree = new MerkleTree(range, 12);
			for (long token : new long[] { range.start(), range.end(), range.start() + range.span() / 2 }) {
				assertThat(tree.leaf(token)).isBetween(0, 4095);
			}
			assertThat(tree.leaf(range.start())).isZero();
		}
		MerkleTree whole = new MerkleTree(TokenRange.split(1).getFirst(), 12);
		assertThat(whole.leaf(Long.MAX_VALUE)).isEqualTo(4095);
		assertThat(whole.leaf(-1)).isEqualTo(2047);
		assertThat(whole.leaf(0)).isEqualTo(2048);
	}

	@Test
	void theTreeDependsOnTheContentNotOnTheOrderItWasAddedIn() {
		List<Entry> entries = new ArrayList<>();
		Random random = new Random(1);
		for (int i = 0; i < 2_000; i++) {
			byte[] value = new byte[random.nextInt(20)];
			random.nextBytes(value);
			entries.add((i % 7 == 0) ? Entry.tombstone(key(i), i) : Entry.value(key(i), value, i));
		}
		MerkleTree inOrder = tree(entries);
		Collections.shuffle(entries, random);
		MerkleTree shuffled = tree(entries);
		assertThat(shuffled.node(0, 0)).isEqualTo(inOrder.node(0, 0));
		assertThat(inOrder.node(0, 0).count()).isEqualTo(2_000);

		// One changed version changes its leaf and every node above it, nothing else.
		Entry changed = entries.get(123);
		entries.set(123, Entry.value(changed.key(), "other".getBytes(StandardCharsets.UTF_8), changed.timestamp()));
		MerkleTree other = tree(entries);
		int leaf = inOrder.leaf(TokenRange.token(changed.key()));
		int differing = 0;
		for (int level = 0; level <= 10; level++) {
			for (int index = 0; index < 1 << level; index++) {
				if (!other.node(level, index).sameAs(inOrder.node(level, index))) {
					differing++;
					assertThat(index).isEqualTo(leaf >>> (10 - level));
				}
			}
		}
		assertThat(differing).isEqualTo(11);
	}

	@Test
	void aNodeOutsideTheTreeIsRefused() {
		MerkleTree tree = new MerkleTree(TokenRange.split(1).getFirst(), 3);
		assertThatThrownBy(() -> tree.node(4, 0)).isInstanceOf(IllegalArgumentException.class);
		assertThatThrownBy(() -> tree.node(2, 4)).isInstanceOf(IllegalArgumentException.class);
		assertThatThrownBy(() -> new MerkleTree(TokenRange.split(1).getFirst(), MerkleTree.MAX_DEPTH + 1))
			.isInstanceOf(IllegalArgumentException.class);
	}

	@Test
	void digestsTellWhichVersionMayWin() {
		EntryDigest value = EntryDigest.of(Entry.value(key(1), new byte[] { 1 }, 10));
		EntryDigest sameTimeOtherValue = EntryDigest.of(Entry.value(key(1), new byte[] { 2 }, 10));
		EntryDigest tombstone = EntryDigest.of(Entry.tombstone(key(1), 10));
		EntryDigest newer = EntryDigest.of(Entry.value(key(1), new byte[] { 1 }, 11));
		assertThat(value.mayLoseTo(newer)).isTrue();
		assertThat(newer.mayLoseTo(value)).isFalse();
		assertThat(value.mayLoseTo(tombstone)).isTrue();
		assertThat(tombstone.mayLoseTo(value)).isFalse();
		assertThat(value.mayLoseTo(sameTimeOtherValue)).isTrue();
		assertThat(sameTimeOtherValue.mayLoseTo(value)).isTrue();
		assertThat(value.mayLoseTo(EntryDigest.of(Entry.value(key(1), new byte[] { 1 }, 10)))).isFalse();
	}

	@Test
	void aCopyWithAnotherExpiryIsAnotherVersion() {
		EntryDigest lease = EntryDigest.of(Entry.expiring(key(1), new byte[] { 1 }, 10, 20));
		EntryDigest lostItsExpiry = EntryDigest.of(Entry.value(key(1), new byte[] { 1 }, 10));
		EntryDigest otherExpiry = EntryDigest.of(Entry.expiring(key(1), new byte[] { 1 }, 10, 30));
		assertThat(lease.sameVersion(lostItsExpiry)).isFalse();
		assertThat(lease.sameVersion(otherExpiry)).isFalse();
		assertThat(lostItsExpiry.mayLoseTo(lease)).isTrue();
		assertThat(otherExpiry.mayLoseTo(lease)).isTrue();
		assertThat(lease.versionHash()).isNotEqualTo(lostItsExpiry.versionHash())
			.isNotEqualTo(otherExpiry.versionHash());
		assertThat(lease.sameVersion(EntryDigest.of(Entry.expiring(key(1), new byte[] { 1 }, 10, 20)))).isTrue();
		assertThat(tree(List.of(Entry.expiring(key(1), new byte[] { 1 }, 10, 20))).node(0, 0)
			.sameAs(tree(List.of(Entry.value(key(1), new byte[] { 1 }, 10))).node(0, 0))).isFalse();
	}

	private static MerkleTree tree(List<Entry> entries) {
		MerkleTree tree = new MerkleTree(TokenRange.split(1).getFirst(), 10);
		for (Entry entry : entries) {
			HashValue128 hash = EntryDigest.of(entry).versionHash();
			tree.add(TokenRange.token(entry.key()), hash.getMostSignificantBits(), hash.getLeastSignificantBits());
		}
		tree.seal();
		return tree;
	}

	private static byte[] key(int i) {
		return ("key-" + i).getBytes(StandardCharsets.UTF_8);
	}

}
