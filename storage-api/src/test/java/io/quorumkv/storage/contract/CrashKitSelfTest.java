package io.quorumkv.storage.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import io.quorumkv.storage.Keys;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.StorageStats;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The crash kit must catch a backend that loses acknowledged writes on a process kill: a
 * toy log-file backend that writes each upsert to the file before acknowledging it loses
 * nothing, and the same backend buffering its writes in the process (a classic bug) fails
 * the kit's bound of zero.
 */
class CrashKitSelfTest extends StorageCrashTest {

	@Override
	protected int acknowledgementsBeforeKill() {
		return 2_000;
	}

	@Test
	void aBackendThatWritesBeforeAcknowledgingLosesNothing() throws Exception {
		crash(Opener.class, "WRITE_THROUGH").assertNothingLost();
		crashRepeatedly(Opener.class, "WRITE_THROUGH", 3).assertNothingLost();
	}

	/**
	 * A backend may purge a tombstone older than its grace period once nothing older is
	 * left (the LSM's compactions do); the kit's deletes are recent enough that none is
	 * purged, or the ledger would count each purged key as lost.
	 */
	@Test
	void aBackendThatPurgesOldTombstonesLosesNothing() throws Exception {
		crashRepeatedly(Opener.class, "PURGING", 2).assertNothingLost();
	}

	@Test
	void aBackendThatBuffersItsWritesInTheProcessFailsTheBound() throws Exception {
		Outcome outcome = crashRepeatedly(Opener.class, "BUFFERED", 2);
		assertThat(outcome.lost()).isPositive();
		assertThatThrownBy(outcome::assertNothingLost).isInstanceOf(AssertionError.class);
	}

	/**
	 * The window bound checks the oldest write a key lost, not its newest one: with a few
	 * hundred keys overwritten all the time, every key's newest write is a few
	 * milliseconds old, and a backend that lost whole runs passed a bound of a second.
	 */
	@Test
	void aBackendThatBuffersItsWritesFailsTheWindowBound() throws Exception {
		Outcome outcome = crashRepeatedly(Opener.class, "BUFFERED", 2, Duration.ofMillis(1_500));
		assertThatThrownBy(() -> outcome.assertLostOnlyWithin(Duration.ofMillis(500)))
			.isInstanceOf(AssertionError.class)
			.hasMessageContaining("age of the oldest lost write");
	}

	@Test
	void aRunShorterThanTheWindowFailsTheWindowBound() throws Exception {
		// A run of a few hundred milliseconds (no span asked), nothing lost: with no
		// write older than the window, the bound could not have failed.
		Outcome outcome = crashRepeatedly(Opener.class, "WRITE_THROUGH", 1);
		assertThat(outcome.lost()).isZero();
		assertThatThrownBy(() -> outcome.assertLostOnlyWithin(Duration.ofSeconds(10)))
			.isInstanceOf(AssertionError.class)
			.hasMessageContaining("or the bound proves nothing");
	}

	/** Opens the toy backend in the child and for the check. */
	public static final class Opener implements StorageOpener {

		@Override
		public Storage open(Path dir, String mode) {
			return new LogStorage(dir, "BUFFERED".equals(mode), "PURGING".equals(mode));
		}

	}

	/**
	 * A map replayed from an append-only log of upserts; when purging, the tombstones
	 * older than {@link #GRACE} are dropped from it once replayed (the map holds nothing
	 * older for them to shadow).
	 */
	static final class LogStorage implements Storage {

		static final Duration GRACE = Duration.ofDays(1);

		private final ConcurrentSkipListMap<byte[], Entry> data = new ConcurrentSkipListMap<>(Keys.ORDER);

		private final DataOutputStream log;

		LogStorage(Path dir, boolean buffered, boolean purging) {
			try {
				Files.createDirectories(dir);
				Path file = dir.resolve("log");
				if (Files.exists(file)) {
					replay(file);
				}
				if (purging) {
					long before = (System.currentTimeMillis() - GRACE.toMillis()) * 1000;
					this.data.values().removeIf((e) -> e.isTombstone() && e.timestamp() < before);
				}
				OutputStream out = new FileOutputStream(file.toFile(), true);
				// The buffered mode holds all it writes until a flush, so a kill takes
				// every write of the run, however long the run: a bounded buffer may have
				// just been written out (a 16 MiB one was, in runs of a few seconds).
				this.log = new DataOutputStream(buffered ? new HeldOutputStream(out) : out);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		/** Holds every byte in memory until flushed. */
		static final class HeldOutputStream extends java.io.ByteArrayOutputStream {

			private final OutputStream file;

			HeldOutputStream(OutputStream file) {
				this.file = file;
			}

			@Override
			public synchronized void flush() throws IOException {
				writeTo(this.file);
				reset();
				this.file.flush();
			}

			@Override
			public void close() throws IOException {
				flush();
				this.file.close();
			}

		}

		/**
		 * Reads the log back; a record the kill tore (its length written, not all its
		 * bytes) is cut off, so that the next records are appended after whole ones.
		 */
		private void replay(Path file) throws IOException {
			java.nio.ByteBuffer log = java.nio.ByteBuffer.wrap(Files.readAllBytes(file));
			int valid = 0;
			while (log.remaining() >= 4) {
				int length = log.getInt();
				if (length < 0 || length > log.remaining()) {
					break;
				}
				byte[] record = new byte[length];
				log.get(record);
				DataInputStream fields = new DataInputStream(new java.io.ByteArrayInputStream(record));
				byte[] key = fields.readNBytes(fields.readInt());
				long ts = fields.readLong();
				int valueLength = fields.readInt();
				apply(new Entry(key, (valueLength < 0) ? null : fields.readNBytes(valueLength), ts));
				valid = log.position();
			}
			try (java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(file,
					java.nio.file.StandardOpenOption.WRITE)) {
				channel.truncate(valid);
			}
		}

		private void apply(Entry entry) {
			this.data.merge(entry.key(), entry, (kept, next) -> EntryOrder.supersedes(next, kept) ? next : kept);
		}

		@Override
		public Mono<Entry> get(byte[] key) {
			return Mono.fromSupplier(() -> this.data.get(key));
		}

		@Override
		public Mono<Void> upsert(Entry entry) {
			return Mono.fromRunnable(() -> {
				java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
				try (DataOutputStream record = new DataOutputStream(bytes)) {
					record.writeInt(entry.key().length);
					record.write(entry.key());
					record.writeLong(entry.timestamp());
					byte[] value = entry.value();
					record.writeInt((value != null) ? value.length : -1);
					if (value != null) {
						record.write(value);
					}
				}
				catch (IOException ex) {
					throw new UncheckedIOException(ex);
				}
				synchronized (this) {
					try {
						this.log.writeInt(bytes.size());
						this.log.write(bytes.toByteArray());
					}
					catch (IOException ex) {
						throw new UncheckedIOException(ex);
					}
					apply(entry);
				}
			});
		}

		@Override
		public Flux<Entry> scan(byte[] fromInclusive, byte @Nullable [] toExclusive) {
			return Flux.fromIterable(((toExclusive != null) ? this.data.subMap(fromInclusive, toExclusive)
					: this.data.tailMap(fromInclusive))
				.values());
		}

		@Override
		public Mono<Void> flush() {
			return Mono.fromRunnable(() -> {
				synchronized (this) {
					try {
						this.log.flush();
					}
					catch (IOException ex) {
						throw new UncheckedIOException(ex);
					}
				}
			});
		}

		@Override
		public StorageStats stats() {
			return new StorageStats("log", Map.of(), Map.of(), null);
		}

		@Override
		public synchronized void close() {
			try {
				this.log.close();
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

	}

}
