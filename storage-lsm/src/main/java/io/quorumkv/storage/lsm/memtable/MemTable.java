package io.quorumkv.storage.lsm.memtable;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.concurrent.ThreadLocalRandom;
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
 * key has a node in an inline skip list (RocksDB's {@code InlineSkipList}), for ordered
 * iteration (scans, flush): {@code +0} its height and key length, {@code +8} its version
 * record's reference (0 while it has none), {@code +16} its stamp, {@code +24} its next
 * references, one per level, then its key bytes. Reference 0 is the head node, so 0 is
 * also null. A hash index of node references, open addressing in a {@code long[]}, serves
 * point reads and updates: an update of a key already present touches only the index and
 * the node; searching the skip list of a large memtable costs a cache miss per level and
 * was most of a replica's CPU in the profiles. The index is sized for the most keys the
 * memtable's size allows; should it fill past half, it takes no more keys and a look-up
 * that misses it searches the skip list, which always holds every key.
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

	static final int MAX_HEIGHT = 12;

	/** The size the no-argument constructor sizes the index for. */
	static final long DEFAULT_SIZE = 4L << 20;

	private static final int MIN_INDEX = 1024;

	private static final int MAX_INDEX = 1 << 30;

	private static final VarHandle LONGS = MemArena.LONGS;

	private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(long[].class);

	// A node's longs, from its reference.
	private static final int META = 0;

	private static final int VERSION = 1;

	private static final int STAMP = 2;

	private static final int NEXT = 3;

	private static final long HEAD = 0;

	/** From {@link #write}: the version there supersedes the entry. */
	private static final long KEPT = Long.MIN_VALUE;

	private final MemArena arena = new MemArena();

	private final long[] index;

	private final AtomicInteger indexAttempts = new AtomicInteger();

	private volatile boolean indexFull;

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
		long keys = Math.max(1, sizeInBytes / (ENTRY_OVERHEAD + 9));
		long capacity = Long.highestOneBit(Math.min(MAX_INDEX, Math.max(MIN_INDEX, 2 * keys)) * 2 - 1);
		this.index = new long[(int) Math.min(MAX_INDEX, capacity)];
		long head = this.arena.allocate(nodeBytes(MAX_HEIGHT, 0));
		if (head != HEAD) {
			throw new IllegalStateException("the head node is not the arena's first allocation");
		}
		this.arena.chunk(HEAD).longs[META] = (long) MAX_HEIGHT << 32;
	}

	private static int nodeBytes(int height, int keyLength) {
		return (NEXT + height) * Long.BYTES + MemArena.align(keyLength);
	}

	/**
	 * Keeps {@code entry} if it supersedes the kept one.
	 * @return whether it was kept
	 */
	public boolean put(Entry entry) {
		byte[] key = entry.key();
		MemorySegment search = MemorySegment.ofArray(key);
		int hash = hash(key);
		long node = lookUp(search, hash);
		return replace((node != 0) ? node : insert(key, search, hash, entry), entry);
	}

	/** The entry of {@code key}; null when none (or while its first put runs). */
	public @Nullable Entry get(byte[] key) {
		long node = lookUp(MemorySegment.ofArray(key), hash(key));
		return (node != 0) ? read(node, key.clone()) : null;
	}

	/** Entries with {@code from <= key < to} ({@code to == null}: open), in key order. */
	public Iterator<Entry> iterator(byte[] from, byte @Nullable [] to) {
		if (to != null && Keys.compare(from, to) >= 0) {
			return Collections.emptyIterator();
		}
		return entries(seek(MemorySegment.ofArray(from)), (to != null) ? MemorySegment.ofArray(to) : null);
	}

	/** All entries in key order. */
	public Iterator<Entry> iterator() {
		return entries(next(HEAD, 0), null);
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
		long total = nodeBytes(MAX_HEIGHT, 0);
		for (long node = next(HEAD, 0); node != 0; node = next(node, 0)) {
			MemArena.Chunk chunk = this.arena.chunk(node);
			int base = MemArena.offset(node) >>> 3;
			long meta = chunk.longs[base + META];
			total += nodeBytes((int) (meta >>> 32), (int) meta);
			long version = chunk.longs[base + VERSION];
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
		long node = lookUp(MemorySegment.ofArray(key), hash(key));
		return (node != 0) ? (long) LONGS.getAcquire(this.arena.chunk(node).longs, node(node) + VERSION) : 0;
	}

	/**
	 * The stamp of {@code key}'s node: even when no write is inside its lock. For tests.
	 */
	long stampOf(byte[] key) {
		long node = lookUp(MemorySegment.ofArray(key), hash(key));
		return (long) LONGS.getAcquire(this.arena.chunk(node).longs, node(node) + STAMP);
	}

	boolean indexFull() {
		return this.indexFull;
	}

	private static int node(long ref) {
		return MemArena.offset(ref) >>> 3;
	}

	private static int hash(byte[] key) {
		int h = Arrays.hashCode(key) * 0x9E3779B9;
		return h ^ (h >>> 16);
	}

	// The hash index.

	/**
	 * The node of {@code key}: from the index, or from the skip list once the index is
	 * full and misses it; 0 when none.
	 */
	private long lookUp(MemorySegment key, int hash) {
		long[] slots = this.index;
		int mask = slots.length - 1;
		for (int i = hash & mask, probes = 0; probes < slots.length; i = (i + 1) & mask, probes++) {
			long node = (long) SLOTS.getAcquire(slots, i);
			if (node == 0) {
				break;
			}
			if (compare(node, key) == 0) {
				return node;
			}
		}
		// Read after the probe: a key that is not in the index while it is not full has
		// no version yet.
		if (this.indexFull) {
			long node = seek(key);
			return (node != 0 && compare(node, key) == 0) ? node : 0;
		}
		return 0;
	}

	/**
	 * Puts {@code node} (of {@code key}) into the index unless it is there: idempotent,
	 * so every writer that missed the key can do it. Once the insert attempts pass half
	 * the capacity, the index is full and takes no more.
	 */
	private void index(long node, MemorySegment key, int hash) {
		if (this.indexFull) {
			return;
		}
		long[] slots = this.index;
		if (this.indexAttempts.incrementAndGet() > slots.length / 2) {
			this.indexFull = true;
			return;
		}
		int mask = slots.length - 1;
		int i = hash & mask;
		for (int probes = 0; probes < slots.length;) {
			long there = (long) SLOTS.getAcquire(slots, i);
			if (there == 0) {
				if (SLOTS.compareAndSet(slots, i, 0L, node)) {
					return;
				}
				// Taken meanwhile: look at what took it.
				continue;
			}
			if (there == node || compare(there, key) == 0) {
				return;
			}
			i = (i + 1) & mask;
			probes++;
		}
		this.indexFull = true;
	}

	// The skip list.

	/**
	 * The node of a key that the index does not have (yet), in the skip list and the
	 * index once this returns: a new one without a version, or the one another writer's
	 * first put of the key is inserting. The skip list decides (the first writer there
	 * wins), and every writer puts the node into the index itself, before it writes its
	 * version.
	 */
	private long insert(byte[] key, MemorySegment search, int hash, Entry entry) {
		int height = randomHeight();
		int size = nodeBytes(height, key.length);
		long node = this.arena.allocate(size);
		MemArena.Chunk chunk = this.arena.chunk(node);
		// Unpublished: plain writes, published by the linking compare-and-set.
		chunk.longs[node(node) + META] = ((long) height << 32) | key.length;
		MemorySegment.copy(key, 0, chunk.bytes, ValueLayout.JAVA_BYTE, keyOffset(node, height), key.length);
		long kept = link(node, height, search);
		if (kept == node) {
			this.count.incrementAndGet();
			SyncPoint.reach(SyncPoint.BETWEEN_INSERTS);
			index(node, search, hash);
			// The key and the overhead; the version's value counts when it is written.
			this.bytes.addAndGet(entry.sizeInBytes() - Version.valueLength(entry) + ENTRY_OVERHEAD);
			return node;
		}
		this.abandoned.addAndGet(size);
		this.bytes.addAndGet(size);
		index(kept, search, hash);
		return kept;
	}

	private static int randomHeight() {
		int random = ThreadLocalRandom.current().nextInt();
		int height = 1;
		// p = 1/4 per level.
		while (height < MAX_HEIGHT && (random & 3) == 0) {
			height++;
			random >>>= 2;
		}
		return height;
	}

	/**
	 * Links {@code node} into every level up to {@code height}, bottom up, each with a
	 * compare-and-set on its predecessor; the search restarts from that predecessor when
	 * another insert changed it.
	 * @return {@code node}, or the node of an equal key that won the race
	 */
	private long link(long node, int height, MemorySegment key) {
		long[] before = new long[MAX_HEIGHT];
		long[] after = new long[MAX_HEIGHT];
		long at = HEAD;
		for (int level = MAX_HEIGHT - 1; level >= 0; level--) {
			long next;
			while (true) {
				next = next(at, level);
				if (next == 0) {
					break;
				}
				int order = compare(next, key);
				if (order == 0) {
					return next;
				}
				if (order > 0) {
					break;
				}
				at = next;
			}
			before[level] = at;
			after[level] = next;
		}
		MemArena.Chunk chunk = this.arena.chunk(node);
		int base = node(node);
		for (int level = 0; level < height; level++) {
			while (true) {
				// Unpublished at this level: read by nobody until the CAS succeeds.
				LONGS.setOpaque(chunk.longs, base + NEXT + level, after[level]);
				long previous = before[level];
				if (LONGS.compareAndSet(this.arena.chunk(previous).longs, node(previous) + NEXT + level, after[level],
						node)) {
					break;
				}
				long from = previous;
				long next;
				while (true) {
					next = next(from, level);
					if (next == 0) {
						break;
					}
					int order = compare(next, key);
					if (order == 0) {
						if (level == 0) {
							return next;
						}
						throw new IllegalStateException("a key linked twice above level 0");
					}
					if (order > 0) {
						break;
					}
					from = next;
				}
				before[level] = from;
				after[level] = next;
			}
		}
		return node;
	}

	/** The first node with a key at least {@code key}; 0 when none. */
	private long seek(MemorySegment key) {
		long at = HEAD;
		long next = 0;
		for (int level = MAX_HEIGHT - 1; level >= 0; level--) {
			while (true) {
				next = next(at, level);
				if (next == 0 || compare(next, key) >= 0) {
					break;
				}
				at = next;
			}
		}
		return next;
	}

	private long next(long node, int level) {
		return (long) LONGS.getAcquire(this.arena.chunk(node).longs, node(node) + NEXT + level);
	}

	private static long keyOffset(long node, int height) {
		return MemArena.offset(node) + (long) (NEXT + height) * Long.BYTES;
	}

	/** {@link Keys#ORDER} of {@code node}'s key against {@code key}. */
	private int compare(long node, MemorySegment key) {
		MemArena.Chunk chunk = this.arena.chunk(node);
		long meta = chunk.longs[node(node) + META];
		int length = (int) meta;
		long start = keyOffset(node, (int) (meta >>> 32));
		long other = key.byteSize();
		long mismatch = MemorySegment.mismatch(chunk.bytes, start, start + length, key, 0, other);
		if (mismatch < 0) {
			return 0;
		}
		if (mismatch == length || mismatch == other) {
			return Long.compare(length, other);
		}
		return Integer.compare(Byte.toUnsignedInt(chunk.bytes.get(ValueLayout.JAVA_BYTE, start + mismatch)),
				Byte.toUnsignedInt(key.get(ValueLayout.JAVA_BYTE, mismatch)));
	}

	private byte[] key(long node) {
		MemArena.Chunk chunk = this.arena.chunk(node);
		long meta = chunk.longs[node(node) + META];
		byte[] key = new byte[(int) meta];
		MemorySegment.copy(chunk.bytes, ValueLayout.JAVA_BYTE, keyOffset(node, (int) (meta >>> 32)), key, 0,
				key.length);
		return key;
	}

	// Versions.

	/**
	 * The entry of {@code node}, whose key is {@code key} (given up to the entry), never
	 * torn by a concurrent write; null while it has no version.
	 */
	private @Nullable Entry read(long node, byte[] key) {
		long[] longs = this.arena.chunk(node).longs;
		int base = node(node);
		while (true) {
			long stamp = (long) LONGS.getAcquire(longs, base + STAMP);
			if ((stamp & 1) == 0) {
				long version = (long) LONGS.getAcquire(longs, base + VERSION);
				if (version == 0) {
					// Set once, by the node's first write: no copy to check.
					return null;
				}
				MemArena.Chunk chunk = this.arena.chunk(version);
				int offset = MemArena.offset(version);
				long meta = Version.meta(chunk, offset);
				byte[] value = Version.value(chunk, offset, meta);
				long timestamp = Version.timestamp(chunk, offset);
				long expiresAt = Version.expiresAt(chunk, offset);
				// The copies before the stamp's second read.
				VarHandle.acquireFence();
				if ((long) LONGS.getOpaque(longs, base + STAMP) == stamp
						&& (long) LONGS.getOpaque(longs, base + VERSION) == version) {
					return Version.entry(key, value, timestamp, expiresAt);
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
		long[] longs = this.arena.chunk(node).longs;
		int base = node(node);
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
					if (to != null && compare(at, to) >= 0) {
						this.node = 0;
						return null;
					}
					this.node = MemTable.this.next(at, 0);
					Entry entry = read(at, key(at));
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
