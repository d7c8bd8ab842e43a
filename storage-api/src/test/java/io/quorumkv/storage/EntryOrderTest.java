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

	@Test
	void expiryTakesPartOnlyBetweenEqualValuesOfEqualTimestamps() {
		Entry plain = Entry.value(K, new byte[] { 1 }, 5);
		Entry soon = Entry.expiring(K, new byte[] { 1 }, 5, 100);
		Entry later = Entry.expiring(K, new byte[] { 1 }, 5, 200);
		assertThat(EntryOrder.INSTANCE.compare(soon, later)).isPositive();
		assertThat(EntryOrder.INSTANCE.compare(later, plain)).isPositive();
		assertThat(EntryOrder.INSTANCE.compare(soon, Entry.expiring(K, new byte[] { 1 }, 5, 100))).isZero();
		// Every other rule comes first: time, then a tombstone, then the value bytes.
		assertThat(EntryOrder.max(Entry.expiring(K, new byte[] { 1 }, 6, 1), plain).timestamp()).isEqualTo(6);
		assertThat(EntryOrder.max(Entry.value(K, new byte[] { 1 }, 6), soon).expires()).isFalse();
		assertThat(EntryOrder.max(Entry.tombstone(K, 5), soon).isTombstone()).isTrue();
		assertThat(EntryOrder.max(Entry.expiring(K, new byte[] { 0 }, 5, 1), plain)).isSameAs(plain);
		assertThat(EntryOrder.compareVersions(5, new byte[] { 1 }, 100, 5, new byte[] { 1 }, Expiry.NEVER))
			.isPositive();
	}

	@Test
	void anExpiredValueIsSeenAsTheTombstoneOfItsTimestamp() {
		Entry lease = Entry.expiring(K, new byte[] { 1 }, 5, 100);
		assertThat(lease.expires()).isTrue();
		assertThat(lease.asSeenAt(99)).isSameAs(lease);
		assertThat(lease.isExpiredAt(99)).isFalse();
		assertThat(lease.isExpiredAt(100)).isTrue();
		assertThat(lease.asSeenAt(100)).isEqualTo(Entry.tombstone(K, 5));
		assertThat(EntryOrder.INSTANCE.compare(lease.asSeenAt(100), lease)).isPositive();
		Entry plain = Entry.value(K, new byte[] { 1 }, 5);
		assertThat(plain.expires()).isFalse();
		assertThat(plain.asSeenAt(Long.MAX_VALUE)).isSameAs(plain);
		assertThat(Entry.tombstone(K, 5).isExpiredAt(Long.MAX_VALUE)).isFalse();
	}

	@Test
	void theExpiryIsPartOfAnEntrysIdentity() {
		Entry lease = Entry.expiring(K, new byte[] { 1 }, 5, 100);
		assertThat(lease).isNotEqualTo(Entry.value(K, new byte[] { 1 }, 5))
			.isNotEqualTo(Entry.expiring(K, new byte[] { 1 }, 5, 101))
			.isEqualTo(new Entry(K, new byte[] { 1 }, 5, 100))
			.hasSameHashCodeAs(new Entry(K, new byte[] { 1 }, 5, 100));
		assertThat(lease.toString()).contains("expiresAt=100");
		assertThat(lease.sizeInBytes()).isEqualTo(Entry.value(K, new byte[] { 1 }, 5).sizeInBytes() + 8);
		assertThat(Entry.expiring(K, new byte[] { 1 }, 5, Entry.NO_EXPIRY))
			.isEqualTo(Entry.value(K, new byte[] { 1 }, 5));
		assertThatIllegalArgumentException().isThrownBy(() -> new Entry(K, null, 5, 100))
			.withMessageContaining("tombstone");
	}

	@Test
	void expiriesAreSecondsAfterAStampAndSaturate() {
		assertThat(Expiry.after(1_000, 2)).isEqualTo(2_001_000);
		assertThat(Expiry.after(Long.MAX_VALUE - 10, 1)).isEqualTo(Expiry.NEVER - 1);
		assertThat(Expiry.after(0, Long.MAX_VALUE)).isEqualTo(Expiry.NEVER - 1);
		assertThat(Expiry.after(-5, 0)).isEqualTo(-5);
		assertThatIllegalArgumentException().isThrownBy(() -> Expiry.after(0, -1));
		assertThat(Expiry
			.nowMicros(java.time.Clock.fixed(java.time.Instant.ofEpochSecond(3, 4_567), java.time.ZoneOffset.UTC)))
			.isEqualTo(3_000_004);
	}

}
