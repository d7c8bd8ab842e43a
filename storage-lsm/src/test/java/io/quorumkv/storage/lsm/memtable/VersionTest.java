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
		MemArena arena = new MemArena();
		for (Entry entry : entries) {
			long version = Version.allocate(arena, entry);
			assertThat(read(arena, version)).isEqualTo(entry);
			long meta = Version.meta(arena.chunk(version), MemArena.offset(version));
			assertThat(Version.length(meta) + KEY.length + Long.BYTES + (entry.expires() ? Long.BYTES : 0))
				.isEqualTo(entry.sizeInBytes());
			assertThat(Version.capacity(meta)).as("the value's length padded to 8")
				.isEqualTo((Version.valueLength(entry) + 7) / 8 * 8);
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
		MemArena arena = new MemArena();
		for (Entry a : entries) {
			for (Entry b : entries) {
				long version = Version.allocate(arena, b);
				assertThat(Integer.signum(Version.compare(a, arena.chunk(version), MemArena.offset(version))))
					.as("%s vs %s", a, b)
					.isEqualTo(Integer.signum(EntryOrder.INSTANCE.compare(a, b)));
			}
		}
	}

	@Test
	void aVersionThatFitsTheRecordIsWrittenOverItAndAMuchShorterOneDoesNot() {
		MemArena arena = new MemArena();
		long version = Version.allocate(arena, Entry.value(KEY, new byte[] { 1, 2 }, 5));
		long meta = meta(arena, version);
		assertThat(Version.capacity(meta)).isEqualTo(8);
		assertThat(Version.fits(meta, Entry.value(KEY, new byte[] { 3, 4 }, 6))).isTrue();
		assertThat(Version.fits(meta, Entry.value(KEY, new byte[8], 6))).as("up to the padded capacity").isTrue();
		assertThat(Version.fits(meta, Entry.value(KEY, new byte[9], 6))).isFalse();
		assertThat(Version.fits(meta, Entry.tombstone(KEY, 6))).as("within the slack").isTrue();
		write(arena, version, Entry.value(KEY, new byte[] { 3, 4, 5 }, 6));
		assertThat(read(arena, version)).isEqualTo(Entry.value(KEY, new byte[] { 3, 4, 5 }, 6));
		write(arena, version, Entry.tombstone(KEY, 7));
		assertThat(read(arena, version)).isEqualTo(Entry.tombstone(KEY, 7));
		write(arena, version, Entry.expiring(KEY, new byte[0], 8, 99));
		assertThat(read(arena, version)).isEqualTo(Entry.expiring(KEY, new byte[0], 8, 99));
		assertThat(Version.capacity(meta(arena, version))).as("kept").isEqualTo(8);

		long large = Version.allocate(arena, Entry.value(KEY, new byte[200], 1));
		assertThat(Version.fits(meta(arena, large), Entry.value(KEY, new byte[68], 2))).isTrue();
		assertThat(Version.fits(meta(arena, large), Entry.value(KEY, new byte[67], 2)))
			.as("a capacity of more than twice the length plus the slack")
			.isFalse();
	}

	private static long meta(MemArena arena, long version) {
		return Version.meta(arena.chunk(version), MemArena.offset(version));
	}

	private static void write(MemArena arena, long version, Entry entry) {
		Version.writeHeader(arena.chunk(version), MemArena.offset(version), entry);
		Version.writeValue(arena.chunk(version), MemArena.offset(version), entry);
	}

	private static Entry read(MemArena arena, long version) {
		return Version.read(arena.chunk(version), MemArena.offset(version), KEY.clone());
	}

}
