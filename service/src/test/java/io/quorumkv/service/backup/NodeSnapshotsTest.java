package io.quorumkv.service.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Snapshots;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.contract.ForwardingStorage;
import io.quorumkv.storage.derby.DerbyStorage;
import io.quorumkv.storage.derby.DerbyStorageOptions;
import io.quorumkv.storage.h2.H2Storage;
import io.quorumkv.storage.h2.H2StorageOptions;
import io.quorumkv.storage.lsm.LsmOptions;
import io.quorumkv.storage.lsm.LsmStorage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * A node's snapshots: one verifies with the right counts; a byte flipped in a table fails
 * verification naming the file; a snapshot cut off halfway (the node stopped) leaves the
 * earlier ones intact, is no snapshot to a reader, and is removed and reported at the
 * next start.
 */
class NodeSnapshotsTest {

	private static final Node SELF = Node.of("node1", "http://127.0.0.1:1");

	private static final Duration WAIT = Duration.ofSeconds(30);

	@TempDir
	Path dir;

	@Test
	void aSnapshotVerifiesWithItsKeysTombstonesAndTimeRange() {
		long base = System.currentTimeMillis() * 1_000;
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(this.dir.resolve("data")))) {
			write(storage, base, 500);
			NodeSnapshots snapshots = snapshots(storage);
			SnapshotManifest manifest = snapshots.take("s1", base + 1_000).block(WAIT);
			assertThat(manifest.asOf()).isEqualTo(base + 1_000);
			assertThat(manifest.node()).isEqualTo("node1");
			assertThat(manifest.files()).extracting(SnapshotManifest.FileEntry::path).contains("data/MANIFEST");
			SnapshotVerifier.Report report = SnapshotVerifier.verify(this.dir.resolve("snapshots/s1"));
			assertThat(report.keys()).isEqualTo(500);
			assertThat(report.tombstones()).isEqualTo(50);
			assertThat(report.minTimestamp()).isEqualTo(base);
			assertThat(report.maxTimestamp()).isEqualTo(base + 499);
			assertThat(snapshots.list().block(WAIT)).extracting(SnapshotManifest::name).containsExactly("s1");
			assertThatThrownBy(() -> snapshots.take("s1", base).block(WAIT))
				.isInstanceOf(NodeSnapshots.SnapshotConflictException.class);
			assertThat(snapshots.clear("s1").block(WAIT)).isTrue();
			assertThat(this.dir.resolve("snapshots/s1")).doesNotExist();
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "h2", "derby" })
	void theSqlBackendsSnapshotWithTheirOwnBackupAndVerify(String backend) {
		long base = System.currentTimeMillis() * 1_000;
		Path data = this.dir.resolve("data");
		try (Storage storage = backend.equals("h2") ? H2Storage.open(H2StorageOptions.defaults(data))
				: DerbyStorage.open(DerbyStorageOptions.defaults(data))) {
			write(storage, base, 200);
			NodeSnapshots snapshots = new NodeSnapshots(this.dir.resolve("snapshots"), storage, backend, SELF,
					() -> null);
			SnapshotManifest manifest = snapshots.take("s1", base + 1_000).block(WAIT);
			assertThat(manifest.format()).isEqualTo(((Snapshots) storage).snapshotFormat());
			write(storage, base + 5_000, 300);
		}
		SnapshotVerifier.Report report = SnapshotVerifier.verify(this.dir.resolve("snapshots/s1"));
		assertThat(report.keys()).isEqualTo(200);
		assertThat(report.tombstones()).isEqualTo(20);
		assertThat(report.maxTimestamp()).isEqualTo(base + 199);
	}

	@Test
	void aFlippedByteFailsVerificationNamingTheFile() throws Exception {
		long base = System.currentTimeMillis() * 1_000;
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(this.dir.resolve("data")))) {
			write(storage, base, 500);
			snapshots(storage).take("s1", base + 1_000).block(WAIT);
		}
		Path snapshot = this.dir.resolve("snapshots/s1");
		SnapshotVerifier.verify(snapshot);
		Path table;
		try (Stream<Path> files = Files.list(snapshot.resolve("data"))) {
			table = files.filter((f) -> f.toString().endsWith(".sst")).findFirst().orElseThrow();
		}
		// The manifest took the table's sum from its digest, listed too; verification
		// reads both: a byte flipped in either is found.
		Path digest = table.resolveSibling(table.getFileName() + ".crc32c");
		assertThat(SnapshotManifest.read(snapshot).files()).extracting(SnapshotManifest.FileEntry::path)
			.contains("data/" + digest.getFileName());
		byte[] intact = Files.readAllBytes(digest);
		flip(digest, 4);
		assertThatThrownBy(() -> SnapshotVerifier.verify(snapshot)).isInstanceOf(SnapshotException.class)
			.hasMessageContaining(digest.getFileName().toString())
			.hasMessageContaining("damaged");
		Files.write(digest, intact, StandardOpenOption.TRUNCATE_EXISTING);
		SnapshotVerifier.verify(snapshot);
		flip(table, Files.size(table) / 3);
		assertThatThrownBy(() -> SnapshotVerifier.verify(snapshot)).isInstanceOf(SnapshotException.class)
			.hasMessageContaining(table.getFileName().toString())
			.hasMessageContaining("damaged");
	}

	private static void flip(Path file, long offset) throws java.io.IOException {
		byte[] bytes = Files.readAllBytes(file);
		bytes[(int) offset] ^= 0x01;
		Files.write(file, bytes, StandardOpenOption.TRUNCATE_EXISTING);
	}

	@Test
	void aSnapshotCutOffHalfwayIsDetectedAndRemovedAtStartWithTheEarlierOnesIntact() {
		long base = System.currentTimeMillis() * 1_000;
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(this.dir.resolve("data")))) {
			write(storage, base, 500);
			snapshots(storage).take("s1", base + 1_000).block(WAIT);
			write(storage, base + 2_000, 300);
			// The storage links its files, then the node stops before the manifest.
			NodeSnapshots dying = new NodeSnapshots(this.dir.resolve("snapshots"), new Stalling(storage), "lsm", SELF,
					() -> null);
			Disposable cut = dying.take("s2", base + 3_000).subscribe();
			Path partial = this.dir.resolve("snapshots/.s2.partial");
			poll(() -> Files.exists(partial.resolve("data/MANIFEST")));
			cut.dispose();
			assertThat(partial.resolve(SnapshotManifest.FILE_NAME)).doesNotExist();
			assertThatThrownBy(() -> SnapshotVerifier.verify(partial)).isInstanceOf(SnapshotException.class)
				.hasMessageContaining("never finished");
			assertThat(dying.list().block(WAIT)).extracting(SnapshotManifest::name).containsExactly("s1");
			// The next start.
			NodeSnapshots restarted = snapshots(storage);
			assertThat(restarted.removedAtStart()).containsExactly("s2");
			assertThat(partial).doesNotExist();
			assertThat(SnapshotVerifier.verify(this.dir.resolve("snapshots/s1")).keys()).isEqualTo(500);
			assertThat(restarted.take("s2", base + 3_000).block(WAIT).files()).isNotEmpty();
		}
	}

	private NodeSnapshots snapshots(Storage storage) {
		return new NodeSnapshots(this.dir.resolve("snapshots"), storage, "lsm", SELF, () -> null);
	}

	/** {@code count} keys, every tenth a tombstone, at {@code base + i}. */
	private static void write(Storage storage, long base, int count) {
		for (int i = 0; i < count; i++) {
			byte[] key = String.format("key%06d", i).getBytes(StandardCharsets.US_ASCII);
			storage
				.upsert((i % 10 == 0) ? Entry.tombstone(key, base + i)
						: Entry.value(key, ("v" + i).getBytes(StandardCharsets.UTF_8), base + i))
				.block(WAIT);
		}
	}

	private static void poll(java.util.function.BooleanSupplier state) {
		long deadline = System.nanoTime() + WAIT.toNanos();
		while (!state.getAsBoolean()) {
			assertThat(System.nanoTime()).as("waited for the partial snapshot").isLessThan(deadline);
			try {
				Thread.sleep(10);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new AssertionError(ex);
			}
		}
	}

	/** Links the files, then never completes: a node that stops there. */
	private static final class Stalling extends ForwardingStorage implements Snapshots {

		private final LsmStorage lsm;

		Stalling(LsmStorage lsm) {
			super(lsm);
			this.lsm = lsm;
		}

		@Override
		public Mono<List<String>> snapshot(Path target) {
			return this.lsm.snapshot(target).then(Mono.never());
		}

		@Override
		public String snapshotFormat() {
			return this.lsm.snapshotFormat();
		}

	}

}
