package io.quorumkv.ycsb.anchors;

import java.util.function.Consumer;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * One client object shared by every YCSB thread of a run: built by the first
 * {@code init}, closed by the last {@code cleanup}.
 */
final class Shared<T> {

	private @Nullable T value;

	private int users;

	synchronized T acquire(Supplier<T> factory) {
		if (this.value == null) {
			this.value = factory.get();
		}
		this.users++;
		return this.value;
	}

	synchronized void release(Consumer<T> closer) {
		this.users--;
		if (this.users == 0 && this.value != null) {
			closer.accept(this.value);
			this.value = null;
		}
	}

}
