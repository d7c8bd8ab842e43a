package io.quorumkv.storage.lsm.memtable;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A memtable's hash index: its keys' {@link SkipList} nodes by key, for point reads and
 * updates (an update of a key already present then touches only the index and the node;
 * searching the skip list of a large memtable costs a cache miss per level). Open
 * addressing with linear probing in a {@code long[]} of node references (0 empty), a slot
 * claimed by compare-and-set; nodes are never removed.
 *
 * <p>
 * Sized for the most keys the memtable's size allows; once the inserts tried pass half
 * its capacity it is full and takes no more (every probe then ends at an empty slot). A
 * look-up that misses a full index searches the skip list, which always holds every key.
 * It reads the flag after its probe: a key missing from an index that is not full has no
 * version yet ({@link MemTable}'s insert protocol).
 */
final class KeyIndex {

	private static final int MIN_CAPACITY = 1024;

	private static final int MAX_CAPACITY = 1 << 30;

	private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(long[].class);

	private final SkipList keys;

	private final long[] slots;

	private final AtomicInteger attempts = new AtomicInteger();

	private volatile boolean full;

	/** An index for {@code keys} of up to {@code expectedKeys} keys. */
	KeyIndex(SkipList keys, long expectedKeys) {
		this.keys = keys;
		long wanted = Math.min(MAX_CAPACITY, Math.max(MIN_CAPACITY, 2 * expectedKeys));
		this.slots = new long[(int) Long.highestOneBit(wanted * 2 - 1)];
	}

	static int hash(byte[] key) {
		int h = Arrays.hashCode(key) * 0x9E3779B9;
		return h ^ (h >>> 16);
	}

	/**
	 * The node of {@code key}: from the index, or from the skip list once the index is
	 * full and misses it; 0 when none.
	 */
	long lookUp(MemorySegment key, int hash) {
		long[] slots = this.slots;
		int mask = slots.length - 1;
		for (int i = hash & mask, probes = 0; probes < slots.length; i = (i + 1) & mask, probes++) {
			long node = (long) SLOTS.getAcquire(slots, i);
			if (node == 0) {
				break;
			}
			if (this.keys.compare(node, key) == 0) {
				return node;
			}
		}
		// Read after the probe: a key that is not in the index while it is not full has
		// no version yet.
		if (this.full) {
			long node = this.keys.seek(key);
			return (node != 0 && this.keys.compare(node, key) == 0) ? node : 0;
		}
		return 0;
	}

	/**
	 * Puts {@code node} (of {@code key}) into the index unless it is there: idempotent,
	 * so every writer that missed the key can do it.
	 */
	void add(long node, MemorySegment key, int hash) {
		if (this.full) {
			return;
		}
		long[] slots = this.slots;
		if (this.attempts.incrementAndGet() > slots.length / 2) {
			this.full = true;
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
			if (there == node || this.keys.compare(there, key) == 0) {
				return;
			}
			i = (i + 1) & mask;
			probes++;
		}
		this.full = true;
	}

	boolean full() {
		return this.full;
	}

}
