package io.quorumkv.storage.lsm.memtable;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.concurrent.ThreadLocalRandom;

import io.quorumkv.storage.Keys;

/**
 * A memtable's keys in key order: an inline skip list in its {@link MemArena} (RocksDB's
 * {@code InlineSkipList}), one node per key. A node, at its reference: {@code +0} its
 * height and key length, {@code +8} its version record's reference (0 while it has none),
 * {@code +16} its stamp (the sequence lock {@link MemTable} keeps), {@code +24} its next
 * references, one per level, then its key bytes. The head node is the arena's first
 * allocation, reference 0, so 0 is also null.
 *
 * <p>
 * Inserts are lock-free: a node is linked bottom up, each level with a compare-and-set on
 * its predecessor's next reference, searching again from that predecessor when another
 * insert changed it. Level 0 decides: if a node of an equal key is there first, the
 * insert loses and that node is the key's. Nodes are never removed, so a predecessor
 * stays valid, and a reader walking the levels with acquire loads sees a node whole (its
 * fields and key are written before the link that publishes it).
 */
final class SkipList {

	static final int MAX_HEIGHT = 12;

	/** A node's longs, from its reference. */
	static final int META = 0;

	static final int VERSION = 1;

	static final int STAMP = 2;

	private static final int NEXT = 3;

	static final long HEAD = 0;

	private static final VarHandle LONGS = MemArena.LONGS;

	private final MemArena arena;

	SkipList(MemArena arena) {
		this.arena = arena;
		long head = arena.allocate(nodeBytes(MAX_HEIGHT, 0));
		if (head != HEAD) {
			throw new IllegalStateException("the head node is not the arena's first allocation");
		}
		arena.chunk(HEAD).longs[META] = (long) MAX_HEIGHT << 32;
	}

	static int nodeBytes(int height, int keyLength) {
		return (NEXT + height) * Long.BYTES + MemArena.align(keyLength);
	}

	/** The index of a node's first long in its chunk's {@code longs}. */
	static int base(long node) {
		return MemArena.offset(node) >>> 3;
	}

	/** The longs of {@code node}'s chunk. */
	long[] longs(long node) {
		return this.arena.chunk(node).longs;
	}

	/** The bytes {@code node} takes in the arena. */
	int nodeBytes(long node) {
		long meta = longs(node)[base(node) + META];
		return nodeBytes((int) (meta >>> 32), (int) meta);
	}

	/**
	 * A new node of {@code key}, of a random height, without a version, not yet linked.
	 */
	long newNode(byte[] key) {
		int height = randomHeight();
		long node = this.arena.allocate(nodeBytes(height, key.length));
		MemArena.Chunk chunk = this.arena.chunk(node);
		// Unpublished: plain writes, published by the linking compare-and-set.
		chunk.longs[base(node) + META] = ((long) height << 32) | key.length;
		MemorySegment.copy(key, 0, chunk.bytes, ValueLayout.JAVA_BYTE, keyOffset(node, height), key.length);
		return node;
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
	 * Links {@code node} (of {@link #newNode}, whose key is {@code key}) into every level
	 * up to its height, bottom up.
	 * @return {@code node}, or the node of an equal key that won the race
	 */
	long link(long node, MemorySegment key) {
		long[] before = new long[MAX_HEIGHT];
		long[] after = new long[MAX_HEIGHT];
		long at = HEAD;
		for (int level = MAX_HEIGHT - 1; level >= 0; level--) {
			long equal = find(at, level, key, before, after);
			if (equal != 0) {
				return equal;
			}
			at = before[level];
		}
		long[] longs = longs(node);
		int base = base(node);
		int height = (int) (longs[base + META] >>> 32);
		for (int level = 0; level < height; level++) {
			while (true) {
				// Unpublished at this level: read by nobody until the CAS succeeds.
				LONGS.setOpaque(longs, base + NEXT + level, after[level]);
				long previous = before[level];
				if (LONGS.compareAndSet(longs(previous), base(previous) + NEXT + level, after[level], node)) {
					break;
				}
				long equal = find(previous, level, key, before, after);
				if (equal != 0) {
					if (level == 0) {
						return equal;
					}
					// Only a node linked at level 0 is linked above it, and this one won
					// level 0 for its key.
					throw new IllegalStateException("a key linked twice above level 0");
				}
			}
		}
		return node;
	}

	/**
	 * Walks {@code level} from {@code from} (whose key is below {@code key}) to the place
	 * of {@code key}: sets {@code before[level]} to the last node with a smaller key and
	 * {@code after[level]} to the node after it (0 at the end).
	 * @return the node of a key equal to {@code key} met on the way, else 0
	 */
	private long find(long from, int level, MemorySegment key, long[] before, long[] after) {
		long at = from;
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
		return 0;
	}

	/** The first node with a key at least {@code key}; 0 when none. */
	long seek(MemorySegment key) {
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

	/** The node after {@code node} at {@code level}; 0 at the end. */
	long next(long node, int level) {
		return (long) LONGS.getAcquire(longs(node), base(node) + NEXT + level);
	}

	private static long keyOffset(long node, int height) {
		return MemArena.offset(node) + (long) (NEXT + height) * Long.BYTES;
	}

	/** {@link Keys#ORDER} of {@code node}'s key against {@code key}. */
	int compare(long node, MemorySegment key) {
		MemArena.Chunk chunk = this.arena.chunk(node);
		long meta = chunk.longs[base(node) + META];
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

	/** A copy of {@code node}'s key. */
	byte[] key(long node) {
		MemArena.Chunk chunk = this.arena.chunk(node);
		long meta = chunk.longs[base(node) + META];
		byte[] key = new byte[(int) meta];
		MemorySegment.copy(chunk.bytes, ValueLayout.JAVA_BYTE, keyOffset(node, (int) (meta >>> 32)), key, 0,
				key.length);
		return key;
	}

}
