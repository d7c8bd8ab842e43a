package io.quorumkv.storage.lsm.memtable;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A memtable's memory: chunks of just under 512 KiB ({@link #CHUNK_BYTES}), each a
 * {@code long[]} (seen also as a heap {@link MemorySegment} for its bytes), handed out by
 * a bump pointer. A reference is a {@code long}, {@code (chunk << 32) | offset}, 8-byte
 * aligned; the first allocation is reference 0, which the memtable uses as null.
 *
 * <p>
 * Why: a memtable holding millions of keys as objects (keys, skip-list and hash-map
 * nodes, versions) gave every young collection those objects to copy until the flush, and
 * old-generation cards to scan each time a new key linked itself into promoted nodes.
 * Primitives written into a few large arrays are neither copied again once old nor a
 * reference for the collector to track. The memory is plain Java heap, freed with the
 * memtable: no close, no native memory.
 *
 * <p>
 * Allocation is lock-free (its callers are event loops): an atomic bump pointer in the
 * current chunk; whoever finds the chunk full publishes a new one into the chunk table
 * (copy-on-write, by compare-and-set) before it becomes current, so a reference handed
 * out is resolvable by any thread that got it through a release/acquire or volatile
 * access. An allocation of more than a quarter chunk gets a chunk of its own size. The
 * unused tail of a full chunk is wasted (less than a quarter chunk), and so is all but
 * the first allocation of a chunk whose thread lost the race to make it current.
 */
final class MemArena {

	/**
	 * Just under half of G1's smallest region (1 MiB, that of heaps up to 2 GiB), with
	 * the array's header: a chunk is then an ordinary young object, copied at most until
	 * its promotion (a straight copy of primitives), never humongous. A humongous array
	 * would take two regions for a 1 MiB chunk, and each such allocation may start a
	 * collection.
	 */
	static final int CHUNK_BYTES = (1 << 19) - 64;

	/** Larger allocations get a chunk of their own. */
	static final int DEDICATED = CHUNK_BYTES / 4;

	/** Element access to a chunk's longs: getAcquire, setRelease, compareAndSet. */
	static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

	private static final VarHandle TOP;

	private static final VarHandle CURRENT;

	static {
		try {
			MethodHandles.Lookup lookup = MethodHandles.lookup();
			TOP = lookup.findVarHandle(Chunk.class, "top", int.class);
			CURRENT = lookup.findVarHandle(MemArena.class, "current", Chunk.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private final AtomicReference<Chunk[]> chunks;

	@SuppressWarnings("unused") // through CURRENT
	private volatile Chunk current;

	MemArena() {
		Chunk first = new Chunk(CHUNK_BYTES);
		first.index = 0;
		this.chunks = new AtomicReference<>(new Chunk[] { first });
		this.current = first;
	}

	/** The size of an allocation for {@code bytes}: a multiple of 8. */
	static int align(int bytes) {
		return (bytes + 7) & ~7;
	}

	static int offset(long ref) {
		return (int) ref;
	}

	/** A new, zeroed region of {@code bytes} (a multiple of 8). */
	long allocate(int bytes) {
		if (bytes > DEDICATED) {
			Chunk own = new Chunk(bytes);
			own.top = bytes;
			own.end = bytes;
			publish(own);
			return ref(own.index, 0);
		}
		while (true) {
			Chunk chunk = (Chunk) CURRENT.getVolatile(this);
			int at = (int) TOP.getAndAdd(chunk, bytes);
			if (at + bytes <= chunk.capacity) {
				return ref(chunk.index, at);
			}
			if (at <= chunk.capacity) {
				// The one allocation that crossed the end: where the chunk's use ends.
				chunk.end = at;
			}
			else if (CURRENT.getVolatile(this) != chunk) {
				continue;
			}
			Chunk next = new Chunk(CHUNK_BYTES);
			next.top = bytes;
			publish(next);
			if (!CURRENT.compareAndSet(this, chunk, next)) {
				// Another thread's chunk became current: this one serves this allocation.
				next.end = bytes;
			}
			return ref(next.index, 0);
		}
	}

	private void publish(Chunk chunk) {
		while (true) {
			Chunk[] table = this.chunks.get();
			Chunk[] grown = Arrays.copyOf(table, table.length + 1);
			chunk.index = table.length;
			grown[table.length] = chunk;
			if (this.chunks.compareAndSet(table, grown)) {
				return;
			}
		}
	}

	private static long ref(int chunk, int offset) {
		return ((long) chunk << 32) | offset;
	}

	/** The chunk of {@code ref}. */
	Chunk chunk(long ref) {
		return this.chunks.get()[(int) (ref >>> 32)];
	}

	/**
	 * Bytes handed out (allocations, not the wasted tails of chunks). For tests, while no
	 * allocation runs.
	 */
	long allocatedBytes() {
		long total = 0;
		for (Chunk chunk : this.chunks.get()) {
			total += (chunk.end >= 0) ? chunk.end : Math.min(chunk.top, chunk.capacity);
		}
		return total;
	}

	/** Chunks in use. For tests. */
	int chunkCount() {
		return this.chunks.get().length;
	}

	static final class Chunk {

		final long[] longs;

		final MemorySegment bytes;

		final int capacity;

		/** Its place in the table, set before it is published. */
		int index = -1;

		/** The bump pointer; past {@link #capacity} once full. */
		volatile int top;

		/** Where its allocations end once known, else -1. */
		volatile int end = -1;

		Chunk(int capacity) {
			this.longs = new long[capacity / Long.BYTES];
			this.bytes = MemorySegment.ofArray(this.longs);
			this.capacity = capacity;
		}

	}

}
