package io.quorumkv.storage.lsm;

import java.lang.System.Logger.Level;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Optional;
import java.util.concurrent.ThreadFactory;

import org.jspecify.annotations.Nullable;

/**
 * A thread's CPU priority (its nice value), lowered for background work that may wait, as
 * RocksDB's {@code Env::LowerThreadPoolCPUPriority} lowers its compaction threads: when
 * the cores are short, the kernel's scheduler then gives them to the event loops first
 * and to a compaction after. A thread at nice 10 weighs about a tenth of one at 0
 * (Linux's CFS weights), so a busy loop waits less behind a compaction, and a compaction
 * still runs whenever a core is free.
 *
 * <p>
 * Linux only, through the foreign function API: {@code setpriority(PRIO_PROCESS, 0,
 * nice)}, where on Linux the nice value belongs to a thread and {@code 0} names the
 * calling one (setpriority(2), "Bugs"). Raising one's own nice value needs no privilege.
 * Elsewhere, or when the call fails, the thread keeps its priority and the first failure
 * is logged. A JVM started under another nice value adds to it (the value is absolute: a
 * thread already above it is left as it is).
 */
final class CpuPriority {

	private static final System.Logger LOG = System.getLogger(CpuPriority.class.getName());

	/** {@code PRIO_PROCESS} of {@code <sys/resource.h>}. */
	private static final int PRIO_PROCESS = 0;

	private static volatile boolean failureLogged;

	private CpuPriority() {
	}

	/**
	 * The two calls, looked up on first use only: a JVM that never lowers a thread never
	 * touches the foreign function API (nor prints its warning where native access is not
	 * enabled).
	 */
	private static final class Calls {

		static final Optional<MethodHandle> SETPRIORITY = lookUp("setpriority", FunctionDescriptor
			.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));

		static final Optional<MethodHandle> GETPRIORITY = lookUp("getpriority",
				FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));

	}

	private static Optional<MethodHandle> lookUp(String name, FunctionDescriptor descriptor) {
		if (!System.getProperty("os.name", "").startsWith("Linux")) {
			return Optional.empty();
		}
		try {
			Linker linker = Linker.nativeLinker();
			return linker.defaultLookup().find(name).map((symbol) -> linker.downcallHandle(symbol, descriptor));
		}
		catch (RuntimeException | LinkageError ex) {
			// Native access refused (--enable-native-access) or not supported here.
			LOG.log(Level.INFO, "cannot call " + name + "(2): background threads keep their CPU priority", ex);
			return Optional.empty();
		}
	}

	/**
	 * A factory of threads that lower their own priority to {@code nice} (0: left as they
	 * are) before they run their task.
	 */
	static ThreadFactory lowered(ThreadFactory factory, int nice) {
		if (nice == 0) {
			return factory;
		}
		return (task) -> factory.newThread(() -> {
			lowerCurrentThread(nice);
			task.run();
		});
	}

	/**
	 * Sets the calling thread's nice value to {@code nice} unless it is already at least
	 * that; a failure is logged once and leaves the thread as it was.
	 */
	static void lowerCurrentThread(int nice) {
		if (Calls.SETPRIORITY.isEmpty()) {
			return;
		}
		try {
			Integer current = currentNice();
			if (current != null && current >= nice) {
				return;
			}
			int result = (int) Calls.SETPRIORITY.get().invokeExact(PRIO_PROCESS, 0, nice);
			if (result != 0) {
				failed("setpriority(2) returned " + result, null);
			}
		}
		catch (Throwable ex) {
			failed("setpriority(2) failed", ex);
		}
	}

	/**
	 * The calling thread's nice value, or null when it cannot be read (elsewhere than on
	 * Linux).
	 */
	static @Nullable Integer currentNice() {
		if (Calls.GETPRIORITY.isEmpty()) {
			return null;
		}
		try {
			// -1 is also a valid nice value; getpriority(2) fails only for a bad
			// argument, which these are not.
			return (int) Calls.GETPRIORITY.get().invokeExact(PRIO_PROCESS, 0);
		}
		catch (Throwable ex) {
			failed("getpriority(2) failed", ex);
			return null;
		}
	}

	private static void failed(String message, @Nullable Throwable ex) {
		if (!failureLogged) {
			failureLogged = true;
			LOG.log(Level.WARNING, message + ": background threads keep their CPU priority", ex);
		}
	}

}
