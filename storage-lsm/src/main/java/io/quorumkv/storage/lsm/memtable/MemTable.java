package io.quorumkv.storage.lsm.memtable;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.util.Collections;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import io.quorumkv.storage.Keys;
import org.jspecify.annotations.Nullable;

/**
 * The in-memory sorted write buffer: per key only the greatest entry by
 * {@link EntryOrder}, replaced under a per-key sequence lock so that concurrent upserts
 * never lose an update. Tracks its size (entry bytes plus a per-entry overhead, plus the
 * records it abandoned) to decide when to freeze (a flushed table's timestamp range is
 * computed by its builder).
 *
 * <p>
 * Everything lives in a {@link MemArena} of large {@code long[]} chunks, not in objects
 * per key: a memtable of millions of new keys then gives a young collection nothing to
 * copy and no old-to-young references to scan (docs/performance.md, "GC pauses"). Each
 * key has a node in an inline skip list ({@link SkipList}), for ordered iteration (scans,
 * flush), which also holds its version's reference and its stamp; a hash index of the
 * nodes ({@link KeyIndex}) serves point reads and updates: an update of a key already
 * present touches only the index and the node.
 *
 * <p>
 * A new key gets a node without a version, which goes into the skip list first and then
 * into the index; only then is a version written into it. Every writer that misses the
 * key in the index (also one that loses the race for the skip-list insert) puts the node
 * into the index itself before it writes. Invariants: a key in the index is in the skip
 * list with the same node, and a node holds a version only once it is in both (or the
 * index is full); readers skip a node without one. So gets and scans see a version from
 * the same instant, and an acknowledged write is reached by both. (Before, a key went
 * into the index first, with its version: an overwrite that found it there was
 * acknowledged while scans still missed the key, issue 52; {@code InsertWindowTest} holds
 * that window open.) The engine freezes a memtable only while no upsert is inside it (its
 * memtable lock), so a flush sees every key with its version.
 *
 * <p>
 * A version is a record in the arena ({@link Version}). A newer one is written over the
 * record in place when it fits, so that a key rewritten with values of one size never
 * allocates again; else into a new record, and the old one is abandoned (and counted in
 * the size, so that rewrites cannot grow memory without the memtable filling up). Each
 * node's stamp is a sequence lock: even means its version reference and record are
 * stable; a writer moves it from even to odd with compare-and-set, writes, and moves it
 * to the next even number; a reader takes an even stamp, copies, and keeps its copy only
 * if the stamp is unchanged after. Both retry while the lock is held, which lasts one
 * copy of a value, without {@code Thread.onSpinWait} or {@code Thread.yield}, which
 * BlockHound reports as blocking calls on an event loop.
 */
public final class MemTable {

	/**
	 * Per entry beyond its key and value, roughly: the node (header, next references, key
	 * padding), the version record's header and padding, the index slot.
	 */
	static final int ENTRY_OVERHEAD = 128;

	/** The size the no-argument constructor sizes the index for. */
	static final long DEFAULT_SIZE = 4L << 20;

	private static final VarHandle LONGS = MemArena.LONGS;

	private static final int VERSION = SkipList.VERSION;

	private static final int STAMP = SkipList.STAMP;

	/** From {@link #write}: the version there supersedes the entry. */
	private static final long KEPT = Long.MIN_VALUE;

	private final MemArena arena = new MemArena();

	private final SkipList keys = new SkipList(this.arena);

	private final KeyIndex index;

	private final AtomicInteger count = new AtomicInteger();

	private final AtomicLong bytes = new AtomicLong();

	private final AtomicLong abandoned = new AtomicLong();

	/** A memtable with an index for {@link #DEFAULT_SIZE} bytes of entries. */
	public MemTable() {
		this(DEFAULT_SIZE);
	}

	/**
	 * A memtable whose hash index is sized for the keys that {@code sizeInBytes} bytes of
	 * entries (the size at which the engine freezes it) can hold.
	 */
	public MemTable(long sizeInBytes) {
		this.index = new KeyIndex(this.keys, Math.max(1, sizeInBytes / (ENTRY_OVERHEAD + 9)));
	}

	/**
	 * Keeps {@code entry} if it supersedes the kept one.
	 * @return whether it was kept
	 */
	public boolean put(Entry entry) {
		byte[] key = entry.key();
		MemorySegment search = MemorySegment.ofArray(key);
		int hash = KeyIndex.hash(key);
		long node = this.index.lookUp(search, hash);
		return replace((node != 0) ? node : insert(key, search, hash, entry), entry);
	}

	/** The entry of {@code key}; null when none (or while its first put runs). */
	public @Nullable Entry get(byte[] key) {
		long node = this.index.lookUp(MemorySegment.ofArray(key), KeyIndex.hash(key));
		return (node != 0) ? read(node, key.clone()) : null;
	}

	/** Entries with {@code from <= key < to} ({@code to == null}: open), in key order. */
	public Iterator<Entry> iterator(byte[] from, byte @Nullable [] to) {
		if (to != null && Keys.compare(from, to) >= 0) {
			return Collections.emptyIterator();
		}
		return entries(this.keys.seek(MemorySegment.ofArray(from)), (to != null) ? MemorySegment.ofArray(to) : null);
	}

	/** All entries in key order. */
	public Iterator<Entry> iterator() {
		return entries(this.keys.next(SkipList.HEAD, 0), null);
	}

	public long sizeInBytes() {
		return this.bytes.get();
	}

	public boolean isEmpty() {
		return this.count.get() == 0;
	}

	/** Keys inserted. */
	public int count() {
		return this.count.get();
	}

	/**
	 * Bytes of the arena that the memtable no longer uses, counted in its size: version
	 * records replaced by a new one, and nodes of writers that lost a key's first insert.
	 * For tests.
	 */
	long abandonedBytes() {
		return this.abandoned.get();
	}

	/** Bytes the memtable's nodes and current records take. For tests, while quiet. */
	long liveBytes() {
		long total = this.keys.nodeBytes(SkipList.HEAD);
		for (long node = this.keys.next(SkipList.HEAD, 0); node != 0; node = this.keys.next(node, 0)) {
			total += this.keys.nodeBytes(node);
			long version = this.keys.longs(node)[SkipList.base(node) + VERSION];
			if (version != 0) {
				total += Version.recordBytes(Version.meta(this.arena.chunk(version), MemArena.offset(version)));
			}
		}
		return total;
	}

	MemArena arena() {
		return this.arena;
	}

	/** The version record of {@code key}, 0 for none. For tests. */
	long versionOf(byte[] key) {
		long node = this.index.lookUp(MemorySegment.ofArray(key), KeyIndex.hash(key));
		return (node != 0) ? (long) LONGS.getAcquire(this.keys.longs(node), SkipList.base(node) + VERSION) : 0;
	}

	/**
	 * The stamp of {@code key}'s node: even when no write is inside its lock. For tests.
	 */
	long stampOf(byte[] key) {
		long node = this.index.lookUp(MemorySegment.ofArray(key), KeyIndex.hash(key));
		return (long) LONGS.getAcquire(this.keys.longs(node), SkipList.base(node) + STAMP);
	}

	boolean indexFull() {
		return this.index.full();
	}

	/**
	 * The node of a key that the index does not have (yet), in the skip list and the
	 * index once this returns: a new one without a version, or the one another writer's
	 * first put of the key is inserting. The skip list decides (the first writer there
	 * wins), and every writer puts the node into the index itself, before it writes its
	 * version.
	 */
	private long insert(byte[] key, MemorySegment search, int hash, Entry entry) {
		long node = this.keys.newNode(key);
		long kept = this.keys.link(node, search);
		if (kept == node) {
			this.count.incrementAndGet();
			SyncPoint.reach(SyncPoint.BETWEEN_INSERTS);
			this.index.add(node, search, hash);
			// The key and the overhead; the version's value counts when it is written.
			this.bytes.addAndGet(entry.sizeInBytes() - Version.valueLength(entry) + ENTRY_OVERHEAD);
			return node;
		}
		int size = this.keys.nodeBytes(node);
		this.abandoned.addAndGet(size);
		this.bytes.addAndGet(size);
		this.index.add(kept, search, hash);
		return kept;
	}

	// Versions.

	/**
	 * The entry of {@code node}, whose key is {@code key} (given up to the entry), never
	 * torn by a concurrent write; null while it has no version.
	 */
	private @Nullable Entry read(long node, byte[] key) {
		long[] longs = this.keys.longs(node);
		int base = SkipList.base(node);
		while (true) {
			long stamp = (long) LONGS.getAcquire(longs, base + STAMP);
			if ((stamp & 1) == 0) {
				long version = (long) LONGS.getAcquire(longs, base + VERSION);
				if (version == 0) {
					// Set once, by the node's first write: no copy to check.
					return null;
				}
				// A torn copy is a valid entry too (Version.read), dropped below.
				Entry entry = Version.read(this.arena.chunk(version), MemArena.offset(version), key);
				// The copies before the stamp's second read.
				VarHandle.acquireFence();
				if ((long) LONGS.getOpaque(longs, base + STAMP) == stamp
						&& (long) LONGS.getOpaque(longs, base + VERSION) == version) {
					return entry;
				}
			}
		}
	}

	/**
	 * Keeps {@code entry} in {@code node} if it supersedes the version there (any does
	 * none): written over the record when it fits, else into a new one.
	 * @return whether it was kept
	 */
	private boolean replace(long node, Entry entry) {
		long[] longs = this.keys.longs(node);
		int base = SkipList.base(node);
		while (true) {
			long stamp = (long) LONGS.getAcquire(longs, base + STAMP);
			if ((stamp & 1) == 0 && LONGS.compareAndSet(longs, base + STAMP, stamp, stamp + 1)) {
				// The odd stamp before any of the writes that follow.
				VarHandle.storeStoreFence();
				long growth = write(longs, base, entry);
				if (growth == KEPT) {
					LONGS.setRelease(longs, base + STAMP, stamp);
					return false;
				}
				LONGS.setRelease(longs, base + STAMP, stamp + 2);
				if (growth != 0) {
					// A same-size rewrite (the common case) leaves the shared counter
					// alone: every event loop writes here, and an atomic add of 0 still
					// takes the line.
					this.bytes.addAndGet(growth);
				}
				return true;
			}
		}
	}

	/**
	 * Under the node's lock: writes {@code entry} if it supersedes the version.
	 * @return the growth of the size (negative for a shorter value), or {@link #KEPT}
	 * when the version there was kept
	 */
	private long write(long[] longs, int base, Entry entry) {
		long version = (long) LONGS.getOpaque(longs, base + VERSION);
		if (version == 0) {
			LONGS.setRelease(longs, base + VERSION, Version.allocate(this.arena, entry));
			return Version.valueLength(entry);
		}
		MemArena.Chunk chunk = this.arena.chunk(version);
		int offset = MemArena.offset(version);
		if (Version.compare(entry, chunk, offset) <= 0) {
			return KEPT;
		}
		long meta = Version.meta(chunk, offset);
		long growth = Version.valueLength(entry) - Version.length(meta);
		if (Version.fits(meta, entry)) {
			Version.writeHeader(chunk, offset, entry);
			Version.writeValue(chunk, offset, entry);
			return growth;
		}
		LONGS.setRelease(longs, base + VERSION, Version.allocate(this.arena, entry));
		int dropped = Version.recordBytes(meta);
		this.abandoned.addAndGet(dropped);
		return growth + dropped;
	}

	private Iterator<Entry> entries(long first, @Nullable MemorySegment to) {
		return new Iterator<>() {

			private long node = first;

			private @Nullable Entry next = advance();

			/** The next entry from {@link #node} on, without nodes lacking a version. */
			private @Nullable Entry advance() {
				while (this.node != 0) {
					long at = this.node;
					if (to != null && MemTable.this.keys.compare(at, to) >= 0) {
						this.node = 0;
						return null;
					}
					this.node = MemTable.this.keys.next(at, 0);
					Entry entry = read(at, MemTable.this.keys.key(at));
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

}
