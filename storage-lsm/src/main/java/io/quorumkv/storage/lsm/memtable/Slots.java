package io.quorumkv.storage.lsm.memtable;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The current version of each of a memtable's keys, one slot per key, packed in arrays of
 * {@value #CHUNK} references that only grow.
 *
 * <p>
 * Why arrays and not one object per key: the slots live long enough to be promoted to the
 * old generation while every write puts a young version into one. A young collection must
 * then scan each old-generation card (512 bytes) that holds such a reference. Slots
 * spread over the heap as small objects dirty one card per key updated (about 40,000
 * cards per pause at 40,000 PUT/s in the GC logs, half the pause); packed, 128 slots
 * share a card (docs/performance.md, "GC pauses").
 */
final class Slots {

	static final int CHUNK_BITS = 12;

	static final int CHUNK = 1 << CHUNK_BITS;

	private static final int MASK = CHUNK - 1;

	private final AtomicInteger next = new AtomicInteger();

	private final AtomicReference<AtomicReferenceArray<byte[]>[]> chunks = new AtomicReference<>(newChunks(0));

	/** A new slot holding {@code version}. */
	int add(byte[] version) {
		int id = this.next.getAndIncrement();
		if (id < 0) {
			this.next.set(Integer.MIN_VALUE);
			throw new IllegalStateException("memtable full: more than " + Integer.MAX_VALUE + " keys");
		}
		chunk(id).set(id & MASK, version);
		return id;
	}

	byte[] get(int id) {
		return this.chunks.get()[id >>> CHUNK_BITS].get(id & MASK);
	}

	boolean compareAndSet(int id, byte[] expected, byte[] version) {
		return this.chunks.get()[id >>> CHUNK_BITS].compareAndSet(id & MASK, expected, version);
	}

	/** Empties a slot that was never published (lost a race for its key). */
	void clear(int id) {
		this.chunks.get()[id >>> CHUNK_BITS].set(id & MASK, null);
	}

	private AtomicReferenceArray<byte[]> chunk(int id) {
		int index = id >>> CHUNK_BITS;
		while (true) {
			AtomicReferenceArray<byte[]>[] current = this.chunks.get();
			if (index < current.length) {
				return current[index];
			}
			// Lock-free growth (writers run on event loops): copy the outer array with
			// the chunks up to index; a writer that loses the race reads the winner's.
			AtomicReferenceArray<byte[]>[] grown = Arrays.copyOf(current, index + 1);
			for (int i = current.length; i <= index; i++) {
				grown[i] = new AtomicReferenceArray<>(CHUNK);
			}
			this.chunks.compareAndSet(current, grown);
		}
	}

	@SuppressWarnings("unchecked")
	private static AtomicReferenceArray<byte[]>[] newChunks(int length) {
		return new AtomicReferenceArray[length];
	}

}
