package io.quorumkv.storage.lsm.compaction;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.function.BooleanSupplier;
import java.util.function.LongFunction;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Throttle;
import io.quorumkv.storage.lsm.io.FileIo;
import io.quorumkv.storage.lsm.iterator.ConcatIterator;
import io.quorumkv.storage.lsm.iterator.EntryIterator;
import io.quorumkv.storage.lsm.iterator.MergingIterator;
import io.quorumkv.storage.lsm.sstable.BlockCache;
import io.quorumkv.storage.lsm.sstable.BlockCodec;
import io.quorumkv.storage.lsm.sstable.SsTable;
import io.quorumkv.storage.lsm.sstable.SsTableBuilder;

/**
 * Runs one {@link CompactionTask}: merges its tables keeping the greatest version of each
 * key (shadowed versions are dropped), turns an expired value into the tombstone of its
 * timestamp ({@link Entry#asSeenAt}), purges tombstones (expired values included) that
 * are older than the grace period and cannot shadow anything outside the compaction, and
 * writes the result as tables of about the target size.
 */
public final class Compactor {

	private static final byte[] FIRST_KEY = new byte[0];

	private final FileIo io;

	private final int blockSize;

	private final int bloomBitsPerKey;

	private final BlockCodec codec;

	private final long targetTableSize;

	private final LongFunction<Path> tablePath;

	private final BlockCache cache;

	/**
	 * @param codec how the outputs' data blocks are compressed
	 * @param tablePath the path of a new table file from a fresh file number
	 * @param cache the engine's block cache, for the new tables
	 */
	public Compactor(FileIo io, int blockSize, int bloomBitsPerKey, BlockCodec codec, long targetTableSize,
			LongFunction<Path> tablePath, BlockCache cache) {
		this.io = io;
		this.cache = cache;
		this.blockSize = blockSize;
		this.bloomBitsPerKey = bloomBitsPerKey;
		this.codec = codec;
		this.targetTableSize = targetTableSize;
		this.tablePath = tablePath;
	}

	/**
	 * Whether a source outside the compaction (another table, a memtable) may hold a
	 * version of {@code key} that a tombstone with {@code timestamp} shadows.
	 */
	@FunctionalInterface
	public interface OlderVersionProbe {

		boolean mayHoldOlder(byte[] key, long timestamp);

	}

	/**
	 * The new tables (each with one reference, owned by the caller), the I/O done, the
	 * tombstones purged (for the caller's re-check before it publishes), the expired
	 * values turned into tombstones (purged or not) and the number of entries dropped by
	 * a key filter.
	 */
	public record Result(List<SsTable> outputs, long bytesRead, long bytesWritten, List<Entry> purged, long expired,
			long dropped) {

		public long tombstonesPurged() {
			return this.purged.size();
		}

	}

	/**
	 * @param numbers fresh file numbers
	 * @param nowMicros the instant expiry is judged at
	 * @param purgeBefore tombstones with a timestamp below this may be purged
	 * @param cancelled checked per entry; a cancelled run throws
	 * {@link CancellationException} and leaves no file behind
	 */
	public Result run(CompactionTask task, java.util.function.LongSupplier numbers, long nowMicros, long purgeBefore,
			OlderVersionProbe probe, BooleanSupplier cancelled) throws IOException {
		return run(task, numbers, nowMicros, purgeBefore, probe, cancelled, null, Throttle.NONE, () -> false);
	}

	/**
	 * As
	 * {@link #run(CompactionTask, java.util.function.LongSupplier, long, long, OlderVersionProbe, BooleanSupplier)},
	 * drops every entry whose key {@code drop} accepts (a full compaction that removes
	 * keys: nothing of them is written), and merges no faster than {@code throttle}
	 * allows, in entries (it waits on the calling thread, asking {@code cancelled} at
	 * least every 50 ms), except while {@code hurry} says other work waits for it.
	 * @param drop keys to leave out, or null
	 * @param throttle the rate of entries merged, kept or not
	 * @param hurry asked before each wait: true skips it
	 */
	public Result run(CompactionTask task, java.util.function.LongSupplier numbers, long nowMicros, long purgeBefore,
			OlderVersionProbe probe, BooleanSupplier cancelled,
			java.util.function.@org.jspecify.annotations.Nullable Predicate<byte[]> drop, Throttle throttle,
			BooleanSupplier hurry) throws IOException {
		int chunk = throttle.unlimited() ? Integer.MAX_VALUE : throttle.chunk();
		int sinceWait = 0;
		List<EntryIterator> sources = new ArrayList<>();
		for (SsTable t : task.inputs()) {
			sources.add(t.iterator(FIRST_KEY));
		}
		if (!task.overlapping().isEmpty()) {
			sources.add(new ConcatIterator<>(task.overlapping(), (t) -> t.iterator(FIRST_KEY)));
		}
		List<SsTable> outputs = new ArrayList<>();
		SsTableBuilder builder = null;
		long written = 0;
		List<Entry> purged = new ArrayList<>();
		long expired = 0;
		long dropped = 0;
		try (MergingIterator merged = new MergingIterator(sources)) {
			for (Entry kept = merged.current(); kept != null; merged.next(), kept = merged.current()) {
				if (cancelled.getAsBoolean()) {
					throw new CancellationException("compaction cancelled");
				}
				if (++sinceWait == chunk) {
					sinceWait = 0;
					if (!hurry.getAsBoolean() && !throttle.acquire(chunk, cancelled)) {
						throw new CancellationException("compaction cancelled");
					}
				}
				if (drop != null && drop.test(kept.key())) {
					dropped++;
					continue;
				}
				Entry e = kept.asSeenAt(nowMicros);
				if (e != kept) {
					expired++;
				}
				if (e.isTombstone() && e.timestamp() < purgeBefore && !probe.mayHoldOlder(e.key(), e.timestamp())) {
					purged.add(e);
					continue;
				}
				if (builder == null) {
					long number = numbers.getAsLong();
					builder = SsTableBuilder.create(this.io, this.tablePath.apply(number), number, this.blockSize,
							this.bloomBitsPerKey, this.codec);
				}
				builder.add(e);
				if (builder.estimatedSize() >= this.targetTableSize) {
					written += finish(builder, outputs);
					builder = null;
				}
			}
			if (builder != null) {
				written += finish(builder, outputs);
				builder = null;
			}
			return new Result(outputs, task.inputBytes(), written, purged, expired, dropped);
		}
		catch (IOException | RuntimeException ex) {
			if (builder != null) {
				builder.close();
			}
			for (SsTable t : outputs) {
				t.markObsolete();
				t.release();
			}
			throw ex;
		}
	}

	private long finish(SsTableBuilder builder, List<SsTable> outputs) throws IOException {
		SsTable table = builder.finishAndOpen(this.cache);
		outputs.add(table);
		return table.fileSize();
	}

}
