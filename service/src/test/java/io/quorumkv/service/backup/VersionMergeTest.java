package io.quorumkv.service.backup;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import io.quorumkv.storage.Keys;
import io.quorumkv.storage.contract.Seeds;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The restore's merge: the tables of several nodes, each in key order, give every key
 * once with all its versions, and the state kept as of {@code T} is the greatest version
 * at or before {@code T} (a tombstone, a value with its expiry), none when all are newer:
 * checked against a model over random tables.
 */
@ExtendWith(Seeds.class)
class VersionMergeTest {

	@Test
	void everyKeyOnceWithItsStateAsOfT(Seeds.Seed given) {
		long seed = given.value();
		System.out.println("VersionMergeTest: " + Seeds.rerun(seed));
		Random random = new Random(seed);
		for (int round = 0; round < 50; round++) {
			long t = 1_000 + random.nextInt(1_000);
			List<Iterator<Entry>> tables = new ArrayList<>();
			Map<String, @Nullable Entry> model = new TreeMap<>();
			Map<String, Integer> versions = new TreeMap<>();
			for (int table = 0; table < 1 + random.nextInt(6); table++) {
				TreeMap<String, Entry> entries = new TreeMap<>();
				for (int i = 0; i < random.nextInt(50); i++) {
					String key = "k" + random.nextInt(60);
					long ts = 500 + random.nextInt(2_000);
					byte[] k = key.getBytes(StandardCharsets.UTF_8);
					Entry entry = switch (random.nextInt(3)) {
						case 0 -> Entry.tombstone(k, ts);
						case 1 ->
							Entry.expiring(k, ("v" + random.nextInt(3)).getBytes(StandardCharsets.UTF_8), ts, ts + 10);
						default -> Entry.value(k, ("v" + random.nextInt(3)).getBytes(StandardCharsets.UTF_8), ts);
					};
					entries.put(key, entry);
				}
				for (Entry entry : entries.values()) {
					String key = new String(entry.key(), StandardCharsets.UTF_8);
					versions.merge(key, 1, Integer::sum);
					Entry kept = model.get(key);
					model.put(key, (entry.timestamp() <= t) ? EntryOrder.max(kept, entry) : kept);
				}
				tables.add(entries.values().iterator());
			}
			VersionMerge merge = new VersionMerge(tables);
			byte[] previous = null;
			Map<String, @Nullable Entry> merged = new TreeMap<>();
			while (merge.hasNext()) {
				List<Entry> group = merge.next();
				byte[] key = group.getFirst().key();
				assertThat(previous == null || Keys.ORDER.compare(previous, key) < 0).as("key order").isTrue();
				previous = key;
				String name = new String(key, StandardCharsets.UTF_8);
				assertThat(group).hasSize(versions.get(name));
				merged.put(name, Restore.asOf(group, t));
			}
			assertThat(merged).as("round %d, T %d", round, t).isEqualTo(model);
		}
	}

}
