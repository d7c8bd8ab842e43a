package io.quorumkv.storage.h2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.nio.file.Path;
import java.time.Duration;

import org.junit.jupiter.api.Test;

class H2StorageOptionsTest {

	private final H2StorageOptions defaults = H2StorageOptions.defaults(Path.of("data"));

	@Test
	void defaultsAreValidAndDocumented() {
		assertThat(this.defaults.durability()).isEqualTo(H2Durability.WRITE_EACH_COMMIT);
		assertThat(this.defaults.syncInterval()).isEqualTo(Duration.ofMillis(100));
		assertThat(this.defaults.poolMaxSize()).isEqualTo(8);
		assertThat(this.defaults.databasePath().toString()).endsWith(Path.of("data", "quorumkv").toString());
	}

	@Test
	void invalidValuesAreRefused() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.defaults.withPool(0, 0))
			.withMessageContaining("poolMaxSize");
		assertThatIllegalArgumentException().isThrownBy(() -> this.defaults.withPool(3, 2))
			.withMessageContaining("poolInitialSize");
		assertThatIllegalArgumentException().isThrownBy(() -> this.defaults.withPending(-1, Duration.ofSeconds(1)))
			.withMessageContaining("maxPendingAcquires");
		assertThatIllegalArgumentException().isThrownBy(() -> this.defaults.withPending(1, Duration.ZERO))
			.withMessageContaining("acquireTimeout");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.defaults.withDurability(H2Durability.WRITE_DELAY, Duration.ofMinutes(2)))
			.withMessageContaining("syncInterval");
		assertThatIllegalArgumentException().isThrownBy(() -> this.defaults.withScanPageSize(0))
			.withMessageContaining("scanPageSize");
	}

}
