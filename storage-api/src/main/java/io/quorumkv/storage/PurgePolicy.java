package io.quorumkv.storage;

/**
 * Which tombstones a backend may drop for good (DESIGN §3: only once it is safe). The
 * node sets one on its storage ({@link Storage#purgePolicy}): a tombstone past the grace
 * period whose key's range was repaired after it was written. A purged tombstone no
 * longer shadows older versions, so an older write that arrives afterwards brings the key
 * back: the policy must only allow tombstones no replica can still miss.
 *
 * <pre>{@code
 * storage.purgePolicy((key, timestamp) -> timestamp < horizon(key));
 * storage.purgeTombstones().block();
 * }</pre>
 *
 * Called from the backend's own threads (compaction, purge passes), possibly for every
 * tombstone: it must be cheap, thread-safe and never block.
 */
@FunctionalInterface
public interface PurgePolicy {

	/** Keeps every tombstone: what a backend does until it is given a policy. */
	PurgePolicy KEEP_ALL = (key, timestamp) -> false;

	/**
	 * Allows every tombstone: for stores whose deletions are never replicated (the node's
	 * hints).
	 */
	PurgePolicy ANY = (key, timestamp) -> true;

	/**
	 * Whether the tombstone of {@code key} written at {@code timestamp} may be dropped.
	 */
	boolean mayPurge(byte[] key, long timestamp);

}
