package io.quorumkv.storage.lsm.memtable;

import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import io.quorumkv.storage.Keys;
import org.jspecify.annotations.Nullable;

/**
 * The in-memory sorted write buffer: per key only the greatest entry by
 * {@link EntryOrder}, replaced under a per-slot lock so that concurrent upserts never
 * lose an update. Tracks its size (entry bytes plus a per-entry overhead) to decide when
 * to freeze (a flushed table's timestamp range is computed by its builder).
 *
 * <p>
 * Each key has one slot holding its version ({@link Slots}), reachable two ways by its
 * number: a hash index for point reads and updates, and a skip list for ordered iteration
 * (scans, flush). An update of a key already present touches only the index and the slot;
 * searching the skip list of a large memtable costs a cache miss per level and was most
 * of a replica's CPU in the profiles (docs/performance.md).
 *
 * <p>
 * A new key gets an empty slot, which goes into the skip list first and then into the
 * index; only then is a version written into it. Every writer that misses the key in the
 * index (also one that loses the race for the first insert) puts the slot into both
 * itself before it writes. Invariants: a key in the index is in the skip list with the
 * same slot, and a slot holds a version only once it is in both; readers skip an empty
 * slot. So gets and scans see a version from the same instant, and an acknowledged write
 * is reached by both. (Before, a key went into the index first, with its version: an
 * overwrite that found it there was acknowledged while scans still missed the key, issue
 * 52; {@code InsertWindowTest} holds that window open.) The engine freezes a memtable
 * only while no upsert is inside it (its memtable lock), so a flush sees every key with
 * its version.
 *
 * <p>
 * A version is one byte array (timestamp, tombstone flag, value; {@link Version}), not an
 * {@link Entry} with its key and value arrays: under a write load most versions are
 * younger than the JVM's promotion age, so every young collection copies all of them, and
 * it copies three small objects per version for an {@code Entry} against one
 * (docs/performance.md, "GC pauses"). Reads build their {@code Entry} from it. The slots
 * are packed in arrays rather than one object per key for the same collections, which
 * scan every old-generation card that points to a young version. And a newer version of
 * the same value length is written over the old one in place, under the slot's sequence
 * lock, so that a key rewritten with values of one size keeps one array, which grows old
 * like the slots and is no longer copied at all ({@link Slots#replace}).
 */
public final class MemTable {

	/**
	 * Per entry beyond its key and value, roughly: the skip-list node and index levels,
	 * the hash index's node and key, the slot number and its reference, the version's
	 * array header.
	 */
	static final int ENTRY_OVERHEAD = 128;

	/**
	 * Each key's {@link IndexKey}, which holds its slot: the map's key is its own value,
	 * and the skip list's value is the same object, so a new key costs no boxed slot
	 * number (two before, one per map: objects that every young collection copied until
	 * the memtable's flush).
	 */
	private final ConcurrentHashMap<IndexKey, IndexKey> index = new ConcurrentHashMap<>();

	private final ConcurrentSkipListMap<byte[], IndexKey> sorted = new ConcurrentSkipListMap<>(Keys.ORDER);

	private final Slots slots = new Slots();

	private final AtomicLong bytes = new AtomicLong();

	/**
	 * Keeps {@code entry} if it supersedes the kept one.
	 * @return whether it was kept
	 */
	public boolean put(Entry entry) {
		IndexKey key = new IndexKey(entry.key());
		IndexKey kept = this.index.get(key);
		return replace((kept != null) ? kept.slot : insert(key, entry), entry);
	}

	/**
	 * The slot of a key the index does not have (yet), in both maps once this returns: a
	 * new, empty one, or the one another writer's first put of the key is inserting. The
	 * skip list decides (the first writer there wins), and every writer puts the slot
	 * into the index itself, before it writes its version. So a version is written only
	 * into a slot that gets and scans both reach, and both see it from the same instant.
	 */
	private int insert(IndexKey key, Entry entry) {
		// Set before either map publishes the key (which orders it before any reader's
		// look-up), never changed after.
		key.slot = this.slots.add(null);
		IndexKey kept = this.sorted.putIfAbsent(entry.key(), key);
		if (kept == null) {
			SyncPoint.reach(SyncPoint.BETWEEN_INSERTS);
			this.index.putIfAbsent(key, key);
			// The key and the overhead; the version's value counts when it is written.
			this.bytes.addAndGet(entry.sizeInBytes() - valueLength(entry) + ENTRY_OVERHEAD);
			return key.slot;
		}
		this.slots.clear(key.slot);
		this.index.putIfAbsent(kept, kept);
		return kept.slot;
	}

	private static int valueLength(Entry entry) {
		byte[] value = entry.value();
		return (value != null) ? value.length : 0;
	}

	private boolean replace(int slot, Entry entry) {
		int replaced = this.slots.replace(slot, entry);
		if (replaced < 0) {
			return false;
		}
		int growth = valueLength(entry) - replaced;
		if (growth != 0) {
			// A same-size rewrite (the common case) leaves the shared counter alone:
			// every event loop writes here, and an atomic add of 0 still takes the line.
			this.bytes.addAndGet(growth);
		}
		return true;
	}

	/** The kept entry of {@code key}; null when none (or while its first put runs). */
	public @Nullable Entry get(byte[] key) {
		IndexKey kept = this.index.get(new IndexKey(key));
		return (kept != null) ? this.slots.read(kept.slot, key) : null;
	}

	/** Entries with {@code from <= key < to} ({@code to == null}: open), in key order. */
	public Iterator<Entry> iterator(byte[] from, byte @Nullable [] to) {
		if (to != null && Keys.compare(from, to) >= 0) {
			return Collections.emptyIterator();
		}
		return entries(
				((to != null) ? this.sorted.subMap(from, true, to, false) : this.sorted.tailMap(from, true)).entrySet()
					.iterator());
	}

	/** All entries in key order. */
	public Iterator<Entry> iterator() {
		return entries(this.sorted.entrySet().iterator());
	}

	/**
	 * The entries of {@code keys}' slots, without the empty ones (a first put running).
	 */
	private Iterator<Entry> entries(Iterator<Map.Entry<byte[], IndexKey>> keys) {
		return new Iterator<>() {

			private @Nullable Entry next = advance();

			private @Nullable Entry advance() {
				while (keys.hasNext()) {
					Map.Entry<byte[], IndexKey> key = keys.next();
					Entry entry = MemTable.this.slots.read(key.getValue().slot, key.getKey());
					if (entry != null) {
						return entry;
					}
				}
				return null;
			}

			@Override
			public boolean hasNext() {
				return this.next != null;
			}

			@Override
			public Entry next() {
				Entry entry = this.next;
				if (entry == null) {
					throw new NoSuchElementException();
				}
				this.next = advance();
				return entry;
			}

		};
	}

	public long sizeInBytes() {
		return this.bytes.get();
	}

	public boolean isEmpty() {
		return this.index.isEmpty();
	}

	public int count() {
		return this.index.size();
	}

	/**
	 * A key of the hash index: the bytes compared by content, the hash computed once, and
	 * the key's slot (-1 until the key is inserted; a look-up's key never has one). The
	 * slot takes no part in equality.
	 */
	private static final class IndexKey {

		private final byte[] key;

		private final int hash;

		private int slot = -1;

		IndexKey(byte[] key) {
			this.key = key;
			this.hash = Arrays.hashCode(key);
		}

		@Override
		public boolean equals(Object other) {
			return other instanceof IndexKey that && Arrays.equals(this.key, that.key);
		}

		@Override
		public int hashCode() {
			return this.hash;
		}

	}

}
