package io.quorumkv.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

/**
 * {@link Entry}: the constructors and the named factories copy the caller's arrays,
 * {@link Entry#wrap} keeps them; both check the same rules, and equality is by content
 * either way.
 */
class EntryTest {

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	@Test
	void theConstructorAndTheFactoriesCopyTheArraysTheyAreGiven() {
		byte[] key = bytes("k");
		byte[] value = bytes("v");
		Entry made = new Entry(key, value, 7, Entry.NO_EXPIRY);
		Entry named = Entry.value(key, value, 7);
		Entry expiring = Entry.expiring(key, value, 7, 9);
		Entry tombstone = Entry.tombstone(key, 8);
		key[0] = 'x';
		value[0] = 'y';
		for (Entry entry : new Entry[] { made, named, expiring, tombstone }) {
			assertThat(entry.key()).isNotSameAs(key).isEqualTo(bytes("k"));
		}
		for (Entry entry : new Entry[] { made, named, expiring }) {
			assertThat(entry.value()).isNotSameAs(value).isEqualTo(bytes("v"));
		}
	}

	@Test
	void wrapKeepsTheArraysThemselves() {
		byte[] key = bytes("k");
		byte[] value = bytes("v");
		Entry wrapped = Entry.wrap(key, value, 7, 9);
		assertThat(wrapped.key()).isSameAs(key);
		assertThat(wrapped.value()).isSameAs(value);
		assertThat(wrapped.timestamp()).isEqualTo(7);
		assertThat(wrapped.expiresAt()).isEqualTo(9);
		assertThat(Entry.wrap(key, null, 8, Entry.NO_EXPIRY).isTombstone()).isTrue();
	}

	@Test
	void wrapChecksWhatTheConstructorChecks() {
		assertThatNullPointerException().isThrownBy(() -> Entry.wrap(null, bytes("v"), 1, Entry.NO_EXPIRY))
			.withMessage("key");
		assertThatIllegalArgumentException().isThrownBy(() -> Entry.wrap(new byte[0], bytes("v"), 1, Entry.NO_EXPIRY))
			.withMessage("key must not be empty");
		assertThatIllegalArgumentException().isThrownBy(() -> Entry.wrap(bytes("k"), null, 1, 5))
			.withMessage("a tombstone does not expire");
		assertThatIllegalArgumentException().isThrownBy(() -> new Entry(new byte[0], bytes("v"), 1))
			.withMessage("key must not be empty");
		assertThatIllegalArgumentException().isThrownBy(() -> new Entry(bytes("k"), null, 1, 5))
			.withMessage("a tombstone does not expire");
	}

	@Test
	void aWrappedEntryEqualsACopiedOneOfTheSameContent() {
		Entry copied = Entry.expiring(bytes("k"), bytes("v"), 7, 9);
		Entry wrapped = Entry.wrap(bytes("k"), bytes("v"), 7, 9);
		assertThat(wrapped).isEqualTo(copied).hasSameHashCodeAs(copied).hasToString(copied.toString());
		assertThat(wrapped).isNotEqualTo(Entry.wrap(bytes("k"), bytes("v"), 7, Entry.NO_EXPIRY))
			.isNotEqualTo(Entry.wrap(bytes("k"), bytes("w"), 7, 9))
			.isNotEqualTo(Entry.wrap(bytes("k"), null, 7, Entry.NO_EXPIRY));
	}

	@Test
	void anExpiredEntryIsSeenAsTheTombstoneItTurnedInto() {
		Entry expiring = Entry.wrap(bytes("k"), bytes("v"), 7, 9);
		assertThat(expiring.asSeenAt(8)).isSameAs(expiring);
		assertThat(expiring.asSeenAt(9)).isEqualTo(Entry.tombstone(bytes("k"), 7));
	}

}
