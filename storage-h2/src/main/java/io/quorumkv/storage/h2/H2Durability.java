package io.quorumkv.storage.h2;

/**
 * When an acknowledged upsert reaches the disk. H2's MVStore writes committed changes to
 * the file either at every commit ({@code WRITE_DELAY=0}) or from a background thread
 * every {@code WRITE_DELAY} ms, and calls fsync only on {@code CHECKPOINT SYNC} and on
 * close; these modes combine the two. docs/storage-h2.md gives the measured costs.
 */
public enum H2Durability {

	/**
	 * Every upsert completes only after {@code CHECKPOINT SYNC} (an fsync): nothing
	 * acknowledged is lost even on power failure. The slowest mode: one store and one
	 * fsync per write.
	 */
	SYNC_EACH_WRITE,

	/**
	 * The default: every commit is written to the file ({@code WRITE_DELAY=0}) before the
	 * upsert is acknowledged, so nothing acknowledged is lost on a process crash
	 * (DESIGN.md §5); a background {@code CHECKPOINT SYNC} every {@code sync-interval}
	 * bounds a power failure's loss to about one interval. Costly in H2: every commit
	 * writes a new MVStore chunk (about 20 KiB), and the file grows fast until old chunks
	 * pass H2's retention time (45 s); docs/storage-h2.md gives the measured cost.
	 */
	WRITE_EACH_COMMIT,

	/**
	 * Comparable to an fsync every {@code sync-interval} (100 ms): H2 writes commits in
	 * the background every interval ({@code WRITE_DELAY}) and a background
	 * {@code CHECKPOINT SYNC} runs every interval when there were writes. A process crash
	 * loses up to about one interval of acknowledged writes (so it is not durable in the
	 * sense of DESIGN.md §5), a power failure up to about two. Faster than the default,
	 * with a small file.
	 */
	PERIODIC_SYNC,

	/**
	 * H2's own write-behind only: {@code WRITE_DELAY} = {@code sync-interval}, no fsync
	 * until {@code flush()} or close. A process crash loses up to one interval of
	 * acknowledged writes, a power failure whatever the OS had not written. The fastest
	 * mode.
	 */
	WRITE_DELAY;

	/** H2's {@code WRITE_DELAY} in ms for this mode. */
	int writeDelayMillis(long syncIntervalMillis) {
		return switch (this) {
			case SYNC_EACH_WRITE, WRITE_EACH_COMMIT -> 0;
			case PERIODIC_SYNC, WRITE_DELAY -> (int) syncIntervalMillis;
		};
	}

	/** Whether a background {@code CHECKPOINT SYNC} runs every sync interval. */
	boolean syncsPeriodically() {
		return this == WRITE_EACH_COMMIT || this == PERIODIC_SYNC;
	}

}
