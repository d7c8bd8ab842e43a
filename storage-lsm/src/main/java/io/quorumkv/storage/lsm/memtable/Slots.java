package io.quorumkv.storage.lsm.memtable;

import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;

import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;

/**
 * The current version of each of a memtable's keys, one slot per key, packed in chunks of
 * {@value #CHUNK} slots that only grow.
 *
 * <p>
 * Why arrays and not one object per key: the slots live long enough to be promoted to the
 * old generation while every write puts a young version into one. A young collection must
 * then scan each old-generation card (512 bytes) that holds such a reference. Slots
 * spread over the heap as small objects dirty one card per key updated (about 40,000
 * cards per pause at 40,000 PUT/s in the GC logs, half the pause); packed, 128 slots
 * share a card (docs/performance.md, "GC pauses").
 *
 * <p>
 * Why versions are written over in place: a version that replaced another in a new array
 * is young, lives until its key is written again, and so is copied by every young
 * collection until then; with every key rewritten within seconds, the memtable's current
 * versions were most of what each collection copied. A newer version of the same value
 * length is therefore written into the array already there, which grows old and is not
 * copied again; only another length takes a new array.
 *
 * <p>
 * Each slot has a stamp, a sequence lock. Invariants: an even stamp means the slot's
 * array and its bytes are stable; a writer moves the stamp from even to odd with
 * compare-and-set (the lock), writes, and moves it to the next even number; a reader
 * takes an even stamp, copies, and keeps its copy only if the stamp is unchanged after.
 * Both retry while the lock is held, which lasts one copy of a value. They spin without
 * {@code Thread.onSpinWait} or {@code Thread.yield}, which BlockHound reports as blocking
 * calls on an event loop.
 */
final class Slots {

	static final int CHUNK_BITS = 12;

	static final int CHUNK = 1 << CHUNK_BITS;

	private static final int MASK = CHUNK - 1;

	private final AtomicInteger next = new AtomicInteger();

	private final AtomicReference<Chunk[]> chunks = new AtomicReference<>(new Chunk[0]);

	/** A new slot holding {@code version}, or empty (null) until {@link #replace}. */
	int add(byte @Nullable [] version) {
		int id = this.next.getAndIncrement();
		if (id < 0) {
			this.next.set(Integer.MIN_VALUE);
			throw new IllegalStateException("memtable full: more than " + Integer.MAX_VALUE + " keys");
		}
		grownTo(id).versions.set(id & MASK, version);
		return id;
	}

	/**
	 * The slot's array; null after {@link #clear}. For tests, which check that a write
	 * went in place; readers go through {@link #read}.
	 */
	byte @Nullable [] get(int id) {
		return chunk(id).versions.get(id & MASK);
	}

	/**
	 * The entry of {@code key} in slot {@code id}, never torn by a concurrent write; null
	 * while the slot is empty.
	 */
	@Nullable Entry read(int id, byte[] key) {
		Chunk chunk = chunk(id);
		int slot = id & MASK;
		while (true) {
			int stamp = chunk.stamps.getAcquire(slot);
			if ((stamp & 1) == 0) {
				byte[] version = chunk.versions.get(slot);
				if (version == null) {
					// Written once, by the slot's first replace: no copy to check.
					return null;
				}
				Entry entry = Version.decode(key, version);
				// The copies before the stamp's second read.
				VarHandle.acquireFence();
				if (chunk.stamps.getPlain(slot) == stamp) {
					return entry;
				}
			}
		}
	}

	/**
	 * Keeps {@code entry} in slot {@code id} if it supersedes the version there (any does
	 * an empty slot's): written over it when the value lengths match, else as a new
	 * array.
	 * @return the replaced version's value length (0 for none), or -1 when the slot's
	 * version was kept
	 */
	int replace(int id, Entry entry) {
		Chunk chunk = chunk(id);
		int slot = id & MASK;
		while (true) {
			int stamp = chunk.stamps.getAcquire(slot);
			if ((stamp & 1) == 0 && chunk.stamps.compareAndSet(slot, stamp, stamp + 1)) {
				// The odd stamp before any of the writes that follow.
				VarHandle.storeStoreFence();
				byte[] current = chunk.versions.get(slot);
				if (current == null) {
					chunk.versions.set(slot, Version.encode(entry));
					chunk.stamps.setRelease(slot, stamp + 2);
					return 0;
				}
				if (Version.compare(entry, current) <= 0) {
					chunk.stamps.setRelease(slot, stamp);
					return -1;
				}
				if (Version.fits(current, entry)) {
					Version.overwrite(current, entry);
				}
				else {
					chunk.versions.set(slot, Version.encode(entry));
				}
				chunk.stamps.setRelease(slot, stamp + 2);
				return Version.valueLength(current);
			}
		}
	}

	/** Empties a slot that was never published (lost the race for its key). */
	void clear(int id) {
		chunk(id).versions.set(id & MASK, null);
	}

	/** The stamp of slot {@code id}: even when no write is inside its lock. For tests. */
	int stamp(int id) {
		return chunk(id).stamps.get(id & MASK);
	}

	private Chunk chunk(int id) {
		return this.chunks.get()[id >>> CHUNK_BITS];
	}

	private Chunk grownTo(int id) {
		int index = id >>> CHUNK_BITS;
		while (true) {
			Chunk[] current = this.chunks.get();
			if (index < current.length) {
				return current[index];
			}
			// Lock-free growth (writers run on event loops): copy the outer array with
			// the chunks up to index; a writer that loses the race reads the winner's.
			Chunk[] grown = Arrays.copyOf(current, index + 1);
			for (int i = current.length; i <= index; i++) {
				grown[i] = new Chunk();
			}
			this.chunks.compareAndSet(current, grown);
		}
	}

	private static final class Chunk {

		final AtomicReferenceArray<byte[]> versions = new AtomicReferenceArray<>(CHUNK);

		final AtomicIntegerArray stamps = new AtomicIntegerArray(CHUNK);

	}

}
