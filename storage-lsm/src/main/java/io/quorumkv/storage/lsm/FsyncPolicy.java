package io.quorumkv.storage.lsm;

/**
 * When the write-ahead log is forced to the disk ({@code fsync}), trading write latency
 * against the window of acknowledged writes a power loss can take away.
 *
 * <p>
 * A process crash (kill -9, out of memory) loses nothing under any policy: an upsert is
 * acknowledged only after its record was written to the operating system. Only a power
 * loss or a kernel crash can lose writes that were written but not yet forced.
 */
public enum FsyncPolicy {

	/**
	 * Every upsert completes only after the log was forced. Concurrent upserts share one
	 * {@code fsync} (group commit on a dedicated syncer thread), so throughput holds
	 * under concurrency, but each write waits for one disk flush (0.1–10 ms).
	 */
	ALWAYS,

	/**
	 * The syncer thread forces the log (every live segment: the active memtable's and
	 * those of frozen memtables not yet flushed) every
	 * {@link LsmOptions#fsyncInterval()}: a power loss can lose at most that window of
	 * acknowledged writes; upserts never wait for the disk. The default, as in
	 * Cassandra's periodic commit log.
	 */
	INTERVAL,

	/**
	 * The log is forced only by {@code flush()}, memtable flushes and {@code close()}; a
	 * power loss can lose everything since then. For tests and for replicas that can
	 * repair from their peers.
	 */
	NEVER

}
