package io.quorumkv.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import org.junit.jupiter.api.Test;

class EntryOrderTest {

	private static final byte[] K = { 'k' };

	@Test
	void greaterTimestampWins() {
		Entry older = Entry.value(K, new byte[] { 9 }, 1);
		Entry newer = Entry.value(K, new byte[] { 1 }, 2);
		assertThat(EntryOrder.max(older, newer)).isSameAs(newer);
		assertThat(EntryOrder.max(newer, older)).isSameAs(newer);
	}

	@Test
	void tombstoneWinsTieAgainstValue() {
		Entry value = Entry.value(K, new byte[] { (byte) 0xFF }, 5);
		Entry tombstone = Entry.tombstone(K, 5);
		assertThat(EntryOrder.INSTANCE.compare(tombstone, value)).isPositive();
		assertThat(EntryOrder.INSTANCE.compare(value, tombstone)).isNegative();
		assertThat(EntryOrder.INSTANCE.compare(tombstone, Entry.tombstone(K, 5))).isZero();
	}

	@Test
	void valuesTieBreakInUnsignedOrder() {
		Entry high = Entry.value(K, new byte[] { (byte) 0x80 }, 5);
		Entry low = Entry.value(K, new byte[] { 0x7F }, 5);
		assertThat(EntryOrder.INSTANCE.compare(high, low)).isPositive();
		assertThat(EntryOrder.supersedes(high, low)).isTrue();
		assertThat(EntryOrder.supersedes(low, high)).isFalse();
		assertThat(EntryOrder.supersedes(high, high)).isFalse();
		assertThat(EntryOrder.supersedes(high, null)).isTrue();
	}

	@Test
	void maxToleratesNull() {
		Entry e = Entry.tombstone(K, 1);
		assertThat(EntryOrder.max(null, e)).isSameAs(e);
		assertThat(EntryOrder.max(e, null)).isSameAs(e);
		assertThat(EntryOrder.max(null, null)).isNull();
	}

	@Test
	void entryCopiesItsInputAndComparesByContent() {
		byte[] key = { 'a' };
		byte[] value = { 1, 2 };
		Entry entry = Entry.value(key, value, 3);
		key[0] = 'b';
		value[0] = 9;
		assertThat(entry.key()).containsExactly('a');
		assertThat(entry.value()).containsExactly(1, 2);
		assertThat(entry).isEqualTo(Entry.value(new byte[] { 'a' }, new byte[] { 1, 2 }, 3));
		assertThat(entry).hasSameHashCodeAs(Entry.value(new byte[] { 'a' }, new byte[] { 1, 2 }, 3));
		assertThat(entry).isNotEqualTo(Entry.tombstone(new byte[] { 'a' }, 3));
		assertThat(entry.toString()).contains("key=a").contains("2 bytes");
	}

	@Test
	void emptyKeyIsRejected() {
		assertThatIllegalArgumentException().isThrownBy(() -> Entry.tombstone(new byte[0], 1));
	}

	@Test
	void keysDisplayEscapesNonPrintableBytes() {
		assertThat(Keys.toDisplayString(new byte[] { 'a', 0, (byte) 0xFF })).isEqualTo("a\\x00\\xff");
	}

}
