package io.quorumkv.storage.lsm.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import org.junit.jupiter.api.Test;

class VersionTest {

	private static final byte[] KEY = "k".getBytes(StandardCharsets.UTF_8);

	@Test
	void decodesWhatItEncodedTellingAnEmptyValueFromATombstone() {
		List<Entry> entries = List.of(Entry.value(KEY, new byte[0], 1), Entry.tombstone(KEY, 1),
				Entry.value(KEY, new byte[] { -1, 0, 7 }, Long.MAX_VALUE), Entry.tombstone(KEY, Long.MIN_VALUE),
				Entry.expiring(KEY, new byte[] { 3 }, 5, -9), Entry.expiring(KEY, new byte[0], 5, Long.MAX_VALUE - 1));
		for (Entry entry : entries) {
			byte[] version = Version.encode(entry);
			assertThat(Version.decode(KEY, version)).isEqualTo(entry);
			assertThat(Version.valueLength(version) + KEY.length + Long.BYTES + (entry.expires() ? Long.BYTES : 0))
				.isEqualTo(entry.sizeInBytes());
		}
	}

	@Test
	void ordersVersionsExactlyAsEntryOrderDoes() {
		Random random = new Random(7);
		List<Entry> entries = new ArrayList<>();
		for (int i = 0; i < 300; i++) {
			// Few timestamps and short values, so that ties on both are frequent.
			long timestamp = random.nextInt(4) - 2;
			if (random.nextInt(5) == 0) {
				entries.add(Entry.tombstone(KEY, timestamp));
			}
			else {
				byte[] value = new byte[random.nextInt(3)];
				random.nextBytes(value);
				// A third expire, at one of two instants, so that expiry ties occur too.
				long expiresAt = switch (random.nextInt(3)) {
					case 0 -> 10 + random.nextInt(2);
					default -> Entry.NO_EXPIRY;
				};
				entries.add(Entry.expiring(KEY, value, timestamp, expiresAt));
			}
		}
		for (Entry a : entries) {
			for (Entry b : entries) {
				assertThat(Integer.signum(Version.compare(a, Version.encode(b)))).as("%s vs %s", a, b)
					.isEqualTo(Integer.signum(EntryOrder.INSTANCE.compare(a, b)));
			}
		}
	}

	@Test
	void aVersionOfTheSameValueLengthIsWrittenOverTheArray() {
		byte[] version = Version.encode(Entry.value(KEY, new byte[] { 1, 2 }, 5));
		assertThat(Version.fits(version, Entry.value(KEY, new byte[] { 3, 4 }, 6))).isTrue();
		assertThat(Version.fits(version, Entry.tombstone(KEY, 6))).isFalse();
		assertThat(Version.fits(version, Entry.value(KEY, new byte[] { 3 }, 6))).isFalse();
		Version.overwrite(version, Entry.value(KEY, new byte[] { 3, 4 }, 6));
		assertThat(Version.decode(KEY, version)).isEqualTo(Entry.value(KEY, new byte[] { 3, 4 }, 6));

		byte[] tombstone = Version.encode(Entry.tombstone(KEY, 1));
		assertThat(Version.fits(tombstone, Entry.value(KEY, new byte[0], 2))).isTrue();
		Version.overwrite(tombstone, Entry.value(KEY, new byte[0], 2));
		assertThat(Version.decode(KEY, tombstone)).isEqualTo(Entry.value(KEY, new byte[0], 2));
		Version.overwrite(tombstone, Entry.tombstone(KEY, 3));
		assertThat(Version.decode(KEY, tombstone)).isEqualTo(Entry.tombstone(KEY, 3));
	}

}
