package io.quorumkv.storage.h2;

/**
 * When an acknowledged upsert reaches the disk. H2's MVStore writes committed changes to
 * the file either at every commit ({@code WRITE_DELAY=0}) or from a background thread
 * every {@code WRITE_DELAY} ms, and calls fsync only on {@code CHECKPOINT SYNC} and on
 * close; these modes combine the two.
 */
public enum H2Durability {

	/**
	 * Every upsert completes only after {@code CHECKPOINT SYNC} (an fsync): nothing
	 * acknowledged is lost even on power failure. The slowest mode: one fsync per write.
	 */
	SYNC_EACH_WRITE,

	/**
	 * The default, like the LSM's WAL with a 100 ms fsync interval: every commit is
	 * written to the file ({@code WRITE_DELAY=0}, so it survives a process crash), and a
	 * background {@code CHECKPOINT SYNC} runs every {@code sync-interval} when there were
	 * writes, so a power failure loses at most about one interval.
	 */
	PERIODIC_SYNC,

	/**
	 * H2's own write-behind: {@code WRITE_DELAY} = {@code sync-interval}, no fsync until
	 * {@code flush()} or close. A process crash loses up to one interval of acknowledged
	 * writes, a power failure whatever the OS had not written. The fastest mode.
	 */
	WRITE_DELAY

}
