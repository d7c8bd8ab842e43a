package io.quorumkv.storage.lsm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.lsm.io.FileIo;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The compaction thread runs at the nice value of its options; 0, the default, leaves it
 * at the JVM's own. Each thread's nice value is read from the kernel's account of it
 * ({@code /proc/thread-self/stat}), not through {@link CpuPriority}. Linux only.
 */
class CpuPriorityTest {

	@TempDir
	Path dir;

	@BeforeEach
	void linux() {
		assumeTrue(Files.isReadable(Path.of("/proc/thread-self/stat")), "Linux: a thread's nice value in /proc");
	}

	@Test
	void aLoweredThreadRunsAtItsNiceValue() throws Exception {
		int own = niceOfThisThread();
		CompletableFuture<Integer> seen = new CompletableFuture<>();
		CpuPriority.lowered(Thread.ofPlatform().name("qkv-nice-test").factory(), 7)
			.newThread(() -> seen.complete(niceOfThisThread()))
			.start();
		assertThat(seen.get(10, TimeUnit.SECONDS)).isEqualTo(Math.max(7, own));
		assertThat(niceOfThisThread()).isEqualTo(own);
	}

	@Test
	void theCompactionThreadRunsAtTheOptionsNiceValue() throws Exception {
		int own = niceOfThisThread();
		assertThat(compactionThreadNice(LsmOptions.defaults(this.dir.resolve("data")).withCompactionNice(10)))
			.isEqualTo(Math.max(10, own));
	}

	@Test
	void byDefaultOrAtZeroTheCompactionThreadKeepsTheJvmsPriority() throws Exception {
		int own = niceOfThisThread();
		assertThat(compactionThreadNice(LsmOptions.defaults(this.dir.resolve("data")))).isEqualTo(own);
		assertThat(compactionThreadNice(LsmOptions.defaults(this.dir.resolve("zero")).withCompactionNice(0)))
			.isEqualTo(own);
	}

	@Test
	void aNiceValueOutsideZeroToNineteenIsRefused() {
		LsmOptions options = LsmOptions.defaults(this.dir);
		assertThatIllegalArgumentException().isThrownBy(() -> options.withCompactionNice(20))
			.withMessageContaining("compactionNice");
		assertThatIllegalArgumentException().isThrownBy(() -> options.withCompactionNice(-1))
			.withMessageContaining("compactionNice");
	}

	/**
	 * The nice value of the compaction thread of an engine opened with {@code options}.
	 */
	private static int compactionThreadNice(LsmOptions options) throws Exception {
		LsmEngine engine = Recovery.open(options, FileIo.real());
		try {
			CompletableFuture<Integer> seen = new CompletableFuture<>();
			engine.background.onCompactionThread(() -> seen.complete(niceOfThisThread()));
			return seen.get(30, TimeUnit.SECONDS);
		}
		finally {
			engine.close();
		}
	}

	/** The calling thread's nice value: field 19 of its {@code stat}. */
	private static int niceOfThisThread() {
		try {
			String stat = Files.readString(Path.of("/proc/thread-self/stat"));
			// The fields after the command, which is in parentheses and may hold spaces.
			String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
			return Integer.parseInt(fields[16]);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
