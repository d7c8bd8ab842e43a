package io.quorumkv.storage.h2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.StorageException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * After a failed {@code fsync} ({@code CHECKPOINT SYNC}) {@link H2Storage} refuses every
 * write and flush until it is reopened, since H2's next sync would succeed without
 * proving the earlier writes durable ({@link H2FailedIoTest} shows H2 itself goes on);
 * reads go on; a reopened storage has every write acknowledged before the failure.
 */
class H2FailedSyncTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	@TempDir
	Path dir;

	@BeforeAll
	static void register() {
		FailingFilePath.register();
	}

	@AfterEach
	void disarm() {
		FailingFilePath.disarm();
		H2Connections.fileSystem = "";
	}

	@Test
	void aFailedSyncMakesEveryLaterWriteAndFlushFailUntilReopened() {
		H2StorageOptions options = H2StorageOptions.defaults(this.dir)
			.withDurability(H2Durability.SYNC_EACH_WRITE, Duration.ofMillis(100));
		H2Connections.fileSystem = FailingFilePath.SCHEME + ":";
		try (H2Storage storage = H2Storage.open(options)) {
			storage.upsert(entry("a", "1", 1)).block(TIMEOUT);
			FailingFilePath.failSyncs = true;
			assertThatThrownBy(() -> storage.upsert(entry("b", "2", 2)).block(TIMEOUT))
				.isInstanceOf(StorageException.class);
			FailingFilePath.failSyncs = false;
			// H2 would now take the write and sync it; the storage must not.
			assertThatThrownBy(() -> storage.upsert(entry("c", "3", 3)).block(TIMEOUT))
				.isInstanceOf(StorageException.class)
				.hasMessageContaining("refuses writes since a sync failed");
			assertThatThrownBy(() -> storage.flush().block(TIMEOUT)).isInstanceOf(StorageException.class)
				.hasMessageContaining("refuses writes since a sync failed");
			assertThat(storage.get(key("a")).map((e) -> new String(e.value(), StandardCharsets.UTF_8)).block(TIMEOUT))
				.isEqualTo("1");
			assertThat(storage.stats().failure()).isNotNull();
		}
		try (H2Storage reopened = H2Storage.open(options)) {
			assertThat(reopened.get(key("a")).block(TIMEOUT)).isNotNull();
			reopened.upsert(entry("d", "4", 4)).block(TIMEOUT);
			reopened.flush().block(TIMEOUT);
		}
	}

	private static byte[] key(String key) {
		return key.getBytes(StandardCharsets.UTF_8);
	}

	private static Entry entry(String key, String value, long timestamp) {
		return new Entry(key(key), value.getBytes(StandardCharsets.UTF_8), timestamp);
	}

}
