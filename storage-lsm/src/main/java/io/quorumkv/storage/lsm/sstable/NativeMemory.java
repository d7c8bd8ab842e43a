package io.quorumkv.storage.lsm.sstable;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Native memory freed explicitly: the C library's {@code malloc} and {@code free} through
 * the foreign function API. The block cache allocates and frees one block at a time at a
 * high rate, from many threads: an {@code Arena.ofShared()} per block would cost a thread
 * handshake on every close, a confined arena cannot be read by other threads, and an
 * automatic arena frees only when the collector finds it (STYLE rule 8). A segment
 * returned here is valid until {@link #free}; its owner must not use it after (the
 * cache's blocks are reference counted for that).
 */
final class NativeMemory {

	private static final Linker LINKER = Linker.nativeLinker();

	private static final MethodHandle MALLOC = LINKER.downcallHandle(LINKER.defaultLookup().findOrThrow("malloc"),
			FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));

	private static final MethodHandle FREE = LINKER.downcallHandle(LINKER.defaultLookup().findOrThrow("free"),
			FunctionDescriptor.ofVoid(ValueLayout.ADDRESS));

	private NativeMemory() {
	}

	/** {@code size} bytes (at least 1) of native memory, uninitialised. */
	static MemorySegment allocate(long size) {
		MemorySegment address;
		try {
			address = (MemorySegment) MALLOC.invokeExact(Math.max(1, size));
		}
		catch (Throwable ex) {
			throw new IllegalStateException("malloc failed", ex);
		}
		if (address.address() == 0) {
			throw new OutOfMemoryError("malloc of " + size + " bytes for the block cache failed");
		}
		return address.reinterpret(size);
	}

	/** Frees a segment returned by {@link #allocate}, once. */
	static void free(MemorySegment segment) {
		try {
			FREE.invokeExact(segment);
		}
		catch (Throwable ex) {
			throw new IllegalStateException("free failed", ex);
		}
	}

}
