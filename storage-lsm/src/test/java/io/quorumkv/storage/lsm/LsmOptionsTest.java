package io.quorumkv.storage.lsm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;

import org.junit.jupiter.api.Test;

class LsmOptionsTest {

	private final LsmOptions defaults = LsmOptions.defaults(Path.of("data"));

	@Test
	void defaultsAreTheDocumentedOnes() {
		assertThat(this.defaults.memtableSize()).isEqualTo(64L << 20);
		assertThat(this.defaults.blockSize()).isEqualTo(4096);
		assertThat(this.defaults.bloomBitsPerKey()).isEqualTo(10);
		assertThat(this.defaults.fsync()).isEqualTo(FsyncPolicy.INTERVAL);
		assertThat(this.defaults.fsyncInterval()).isEqualTo(Duration.ofMillis(100));
		assertThat(this.defaults.level0CompactionTrigger()).isEqualTo(4);
		assertThat(this.defaults.levelTargetSize(1)).isEqualTo(256L << 20);
		assertThat(this.defaults.levelTargetSize(3)).isEqualTo(100 * (256L << 20));
		assertThat(this.defaults.tombstoneGracePeriod()).isEqualTo(Duration.ofDays(10));
		assertThat(this.defaults.maxImmutableMemtables()).isEqualTo(2);
		assertThat(this.defaults.compression()).isEqualTo(Compression.LZ4);
		assertThat(this.defaults.blockCacheSize()).isEqualTo(Math.min(512L << 20, Runtime.getRuntime().maxMemory() / 4))
			.isPositive();
	}

	@Test
	void withersChangeOneField() {
		LsmOptions changed = this.defaults.withMemtableSize(1 << 20).withFsync(FsyncPolicy.ALWAYS);
		assertThat(changed.memtableSize()).isEqualTo(1 << 20);
		assertThat(changed.fsync()).isEqualTo(FsyncPolicy.ALWAYS);
		assertThat(changed.withMemtableSize(64L << 20).withFsync(FsyncPolicy.INTERVAL)).isEqualTo(this.defaults);
	}

	@Test
	void invalidValuesAreRejectedNamingTheField() {
		assertThatThrownBy(() -> this.defaults.withMemtableSize(10)).hasMessageContaining("memtableSize");
		assertThatThrownBy(() -> this.defaults.withBlockSize(0)).hasMessageContaining("blockSize");
		assertThatThrownBy(() -> this.defaults.withBloomBitsPerKey(0)).hasMessageContaining("bloomBitsPerKey");
		assertThatThrownBy(() -> this.defaults.withFsyncInterval(Duration.ZERO)).hasMessageContaining("fsyncInterval");
		assertThatThrownBy(() -> this.defaults.withCompaction(1, 1 << 20, 10, 1 << 20))
			.hasMessageContaining("level0CompactionTrigger");
		assertThatThrownBy(() -> this.defaults.withTombstoneGracePeriod(Duration.ofSeconds(-1)))
			.hasMessageContaining("tombstoneGracePeriod");
		assertThatThrownBy(() -> this.defaults.withMaxImmutableMemtables(0))
			.hasMessageContaining("maxImmutableMemtables");
		assertThatThrownBy(() -> this.defaults.withBlockCacheSize(-1)).hasMessageContaining("blockCacheSize");
	}

}
