package io.quorumkv.storage.lsm.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReferenceArray;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.contract.Seeds;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Latched races of same-length (in place) and changing-length (new array) overwrites
 * against readers, round after round ({@link OverwriteRace}), on the slot table and the
 * memtable; the race checks are shown to catch a slot table that writes in place without
 * its sequence lock. jcstress was not used: these races need whole versions of hundreds
 * of bytes and many operations per round, which latched threads cover at a fraction of
 * the set-up.
 */
@ExtendWith(Seeds.class)
class OverwriteRaceTest {

	private static final int ROUNDS = Boolean.getBoolean("quorumkv.storage.long") ? 2_000 : 150;

	@Test
	void slotsNeverTearNorGoBackUnderMixedLengthOverwrites() throws Exception {
		for (int round = 0; round < ROUNDS; round++) {
			Slots slots = new Slots();
			int[] ids = new int[OverwriteRace.KEYS];
			OverwriteRace.Target target = new OverwriteRace.Target() {

				@Override
				public void write(int key, Entry entry) {
					if (entry.timestamp() == 0) {
						// The round's first version of each key, before the race.
						ids[key] = slots.add(Version.encode(entry));
					}
					else {
						slots.replace(ids[key], entry);
					}
				}

				@Override
				public @Nullable Entry read(int key) {
					return slots.read(ids[key], OverwriteRace.key(key));
				}

			};
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

	/** The checks catch a slot table that writes versions in place without a lock. */
	@Test
	void theChecksCatchInPlaceWritesWithoutTheSequenceLock() throws Exception {
		int anomalies = 0;
		for (int round = 0; round < 200 && anomalies == 0; round++) {
			AtomicReferenceArray<byte[]> unlocked = new AtomicReferenceArray<>(OverwriteRace.KEYS);
			OverwriteRace.Target broken = new OverwriteRace.Target() {

				@Override
				public void write(int key, Entry entry) {
					byte[] current = unlocked.get(key);
					if (current != null && Version.compare(entry, current) <= 0) {
						return;
					}
					if (current != null && Version.fits(current, entry)) {
						// The defect: in place, no stamp, and a pause halfway.
						byte[] next = Version.encode(entry);
						System.arraycopy(next, 0, current, 0, next.length / 2);
						Thread.yield();
						System.arraycopy(next, next.length / 2, current, next.length / 2,
								next.length - next.length / 2);
					}
					else {
						unlocked.set(key, Version.encode(entry));
					}
				}

				@Override
				public Entry read(int key) {
					return Version.decode(OverwriteRace.key(key), unlocked.get(key));
				}

			};
			List<String> found = OverwriteRace.round(broken, 2_000, 2);
			anomalies = found.size();
		}
		assertThat(anomalies).as("anomalies found in the broken slot table").isPositive();
	}

}
