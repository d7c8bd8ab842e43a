package io.quorumkv.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.BitSet;

import io.quorumkv.storage.lsm.LsmOptions;
import io.quorumkv.storage.lsm.LsmStorage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

class LsmLoaderTests {

	@TempDir
	Path dir;

	@Test
	void keysAreTheLoadScriptsKeys() {
		assertThat(new String(LsmLoader.key(42), StandardCharsets.US_ASCII)).isEqualTo("k0000000042");
	}

	@Test
	void theRandomOrderVisitsEveryIndexOnce() {
		for (long n : new long[] { 1, 2, 10, 1000, 4096, 99_991 }) {
			long step = LsmLoader.coprimeStep(n);
			BitSet seen = new BitSet((int) n);
			for (long i = 0; i < n; i++) {
				seen.set((int) Math.floorMod(i * step, n));
			}
			assertThat(seen.cardinality()).as("n=%d step=%d", n, step).isEqualTo((int) n);
		}
	}

	@Test
	void aLoadedFolderHoldsEveryKey() throws Exception {
		LsmLoader.load(this.dir, 3_000, 100, true);
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(this.dir))) {
			for (long i = 0; i < 3_000; i += 7) {
				assertThat(storage.get(LsmLoader.key(i)).block()).isNotNull();
			}
			assertThat(storage.get(LsmLoader.key(3_000)).block()).isNull();
		}
	}

}
