package io.quorumkv.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.StorageClosedException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class RocksDbStorageTests {

	@TempDir
	Path dir;

	@Test
	void valuesAndTombstonesSurviveAReopenInKeyOrder() {
		byte[] a = bytes("a");
		byte[] b = bytes("b");
		byte[] c = bytes("c");
		try (RocksDbStorage storage = RocksDbStorage.open(this.dir)) {
			storage.upsert(Entry.value(c, bytes("3"), 30)).block();
			storage.upsert(Entry.tombstone(b, 20)).block();
			storage.upsert(Entry.value(a, new byte[0], 10)).block();
			storage.flush().block();
		}
		try (RocksDbStorage storage = RocksDbStorage.open(this.dir)) {
			assertThat(storage.get(b).block()).isEqualTo(Entry.tombstone(b, 20));
			assertThat(storage.get(bytes("z")).block()).isNull();
			assertThat(storage.scan(a, null).collectList().block()).containsExactly(Entry.value(a, new byte[0], 10),
					Entry.tombstone(b, 20), Entry.value(c, bytes("3"), 30));
			assertThat(storage.scan(b, c).collectList().block()).containsExactly(Entry.tombstone(b, 20));
			assertThat(storage.stats().counters()).containsEntry("scans", 2L);
		}
	}

	@Test
	void comparingVersionsKeepsTheWinnerWhereBlindWritesKeepTheLast() {
		byte[] a = bytes("a");
		byte[] b = bytes("b");
		try (RocksDbStorage storage = RocksDbStorage.open(this.dir.resolve("lww"), RocksWriter.Mode.COMPARE_VERSIONS)) {
			storage.upsert(Entry.value(a, bytes("new"), 20)).block();
			storage.upsert(Entry.value(a, bytes("old"), 10)).block();
			storage.upsert(Entry.value(a, bytes("tie-greater"), 20)).block();
			storage.upsertAll(List.of(Entry.value(b, bytes("2"), 2), Entry.tombstone(b, 3),
					Entry.value(b, bytes("1"), 1), Entry.value(a, bytes("older"), 5)))
				.block();
			assertThat(storage.get(a).block()).isEqualTo(Entry.value(a, bytes("tie-greater"), 20));
			assertThat(storage.get(b).block()).isEqualTo(Entry.tombstone(b, 3));
		}
		try (RocksDbStorage storage = RocksDbStorage.open(this.dir.resolve("blind"), RocksWriter.Mode.BLIND)) {
			storage.upsert(Entry.value(a, bytes("new"), 20)).block();
			storage.upsertAll(List.of(Entry.value(a, bytes("old"), 10))).block();
			assertThat(storage.get(a).block()).isEqualTo(Entry.value(a, bytes("old"), 10));
		}
	}

	@Test
	void aClosedStoreRefusesCallsAndClosesOnce() {
		RocksDbStorage storage = RocksDbStorage.open(this.dir);
		storage.close();
		storage.close();
		assertThatExceptionOfType(StorageClosedException.class).isThrownBy(() -> storage.get(bytes("a")).block());
	}

	@Test
	void aCancelledScanReleasesItsIteratorSoCloseDoesNotWait() {
		try (RocksDbStorage storage = RocksDbStorage.open(this.dir)) {
			for (int i = 0; i < 100; i++) {
				storage.upsert(Entry.value(bytes("k" + (1000 + i)), bytes("v"), i)).block();
			}
			assertThat(storage.scan(bytes("k"), null).take(10).count().block()).isEqualTo(10);
		}
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
