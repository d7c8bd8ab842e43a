package io.quorumkv.storage.lsm.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLongArray;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.contract.Seeds;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Latched races of same-length (in place) and changing-length (new array) overwrites
 * against readers, round after round ({@link OverwriteRace}), on the memtable (its gets,
 * its iterators, and its gets through the skip list once its index is full); the race
 * checks are shown to catch version records written in place without the sequence lock.
 * jcstress was not used: these races need whole versions of hundreds of bytes and many
 * operations per round, which latched threads cover at a fraction of the set-up.
 */
@ExtendWith(Seeds.class)
class OverwriteRaceTest {

	private static final int ROUNDS = Boolean.getBoolean("quorumkv.storage.long") ? 2_000 : 150;

	/**
	 * The race on the version records alone, with gets that find the keys in the skip
	 * list: the memtable's index is full with other keys.
	 */
	@Test
	void versionRecordsNeverTearNorGoBackUnderMixedLengthOverwritesWithTheIndexFull() throws Exception {
		for (int round = 0; round < ROUNDS; round++) {
			MemTable memtable = new MemTable(4096);
			for (int other = 0; other < 600; other++) {
				memtable.put(Entry.value(new byte[] { 'o', (byte) (other >>> 8), (byte) other }, new byte[1], 1));
			}
			OverwriteRace.Target target = new OverwriteRace.Target() {

				@Override
				public void write(int key, Entry entry) {
					memtable.put(entry);
				}

				@Override
				public @Nullable Entry read(int key) {
					return memtable.get(OverwriteRace.key(key));
				}

			};
			assertThat(memtable.indexFull()).isTrue();
			assertThat(OverwriteRace.round(target, 2_000, 2)).as("round %d", round).isEmpty();
		}
	}

	@Test
	void memtableReadsAndIteratorsNeverTearNorGoBackUnderMixedLengthOverwrites(Random random) throws Exception {
		for (int round = 0; round < ROUNDS; round++) {
			MemTable memtable = new MemTable();
			OverwriteRace.Target target = new OverwriteRace.Target() {

				@Override
				public void write(int key, Entry entry) {
					memtable.put(entry);
				}

				@Override
				public @Nullable Entry read(int key) {
					// Half the reads through the ordered iterator, as scans and flushes
					// read, chosen by the seeded random.
					if (random.nextBoolean()) {
						return memtable.get(OverwriteRace.key(key));
					}
					var it = memtable.iterator(OverwriteRace.key(key), null);
					return it.hasNext() ? it.next() : null;
				}

			};
			assertThat(OverwriteRace.round(target, 2_000, 2)).as("round %d", round).isEmpty();
		}
	}

	/**
	 * The checks catch version records written in place without the sequence lock.
	 */
	@Test
	void theChecksCatchInPlaceWritesWithoutTheSequenceLock() throws Exception {
		int anomalies = 0;
		for (int round = 0; round < 200 && anomalies == 0; round++) {
			MemArena arena = new MemArena();
			// Reference 0 means none here, as the head node makes it in a memtable.
			arena.allocate(Long.BYTES);
			AtomicLongArray unlocked = new AtomicLongArray(OverwriteRace.KEYS);
			OverwriteRace.Target broken = new OverwriteRace.Target() {

				@Override
				public void write(int key, Entry entry) {
					long current = unlocked.get(key);
					if (current != 0) {
						MemArena.Chunk chunk = arena.chunk(current);
						int offset = MemArena.offset(current);
						if (Version.compare(entry, chunk, offset) <= 0) {
							return;
						}
						if (Version.fits(Version.meta(chunk, offset), entry)) {
							// The defect: in place, no stamp, and a pause halfway.
							Version.writeHeader(chunk, offset, entry);
							Thread.yield();
							Version.writeValue(chunk, offset, entry);
							return;
						}
					}
					unlocked.set(key, Version.allocate(arena, entry));
				}

				@Override
				public Entry read(int key) {
					long version = unlocked.get(key);
					return Version.read(arena.chunk(version), MemArena.offset(version), OverwriteRace.key(key));
				}

			};
			List<String> found = OverwriteRace.round(broken, 2_000, 2);
			anomalies = found.size();
		}
		assertThat(anomalies).as("anomalies found in the broken version records").isPositive();
	}

}
