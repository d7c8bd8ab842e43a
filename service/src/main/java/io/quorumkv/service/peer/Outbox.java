package io.quorumkv.service.peer;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.netty.util.concurrent.EventExecutor;
import org.jspecify.annotations.Nullable;

/**
 * The operations a replica stream ({@link PeerStream}) takes in one turn of its loop,
 * sent together at the turn's end in one chunk. Owned by the stream's loop.
 */
final class Outbox {

	private final List<StreamOperation> operations = new ArrayList<>();

	private final EventExecutor loop;

	private final Runnable flush;

	private boolean queued;

	/**
	 * @param flush called once at the end of each turn that added an operation
	 */
	Outbox(EventExecutor loop, Runnable flush) {
		this.loop = loop;
		this.flush = flush;
	}

	void add(StreamOperation operation) {
		this.operations.add(operation);
		if (!this.queued) {
			this.queued = true;
			EventLoops.afterTurn(this.loop, this.flush);
		}
	}

	/**
	 * The frames of the operations not yet done, in one array, each with the ring
	 * {@code epoch} and what is left of its deadline; null when none is left to send. The
	 * outbox is empty after.
	 */
	byte @Nullable [] take(long epoch, long timeoutNanos) {
		this.queued = false;
		int size = 0;
		for (StreamOperation operation : this.operations) {
			size += operation.done ? 0 : operation.size();
		}
		if (size == 0) {
			this.operations.clear();
			return null;
		}
		ByteBuffer chunk = ByteBuffer.allocate(size);
		long now = System.nanoTime();
		for (StreamOperation operation : this.operations) {
			if (!operation.done) {
				long left = operation.startNanos + timeoutNanos - now;
				operation.encode(chunk, epoch, (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
			}
		}
		this.operations.clear();
		return chunk.array();
	}

	/** Drops what was not sent (the operations fail elsewhere). */
	void clear() {
		this.operations.clear();
	}

}
