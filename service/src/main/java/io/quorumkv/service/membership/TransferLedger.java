package io.quorumkv.service.membership;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.membership.TransferProgress.Source;
import io.quorumkv.storage.Storage;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * How far the target's streams of the change under way have come: each stream's cursor,
 * keys and bytes ({@link TransferProgress}), kept in memory as the batches land and made
 * durable every checkpoint interval, after a flush of the storage, so a cursor on disk
 * never runs ahead of the entries it covers. Every change of the record happens under
 * this object's lock; the disk writes run on a thread of their own.
 */
final class TransferLedger implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(TransferLedger.class);

	private final Storage storage;

	private final Path folder;

	private final long checkpointNanos;

	private final Scheduler files = Schedulers.newSingle("quorumkv-transfers", true);

	private final Map<String, Long> estimates = new ConcurrentHashMap<>();

	private volatile @Nullable TransferProgress progress;

	private volatile long lastCheckpoint = System.nanoTime();

	private volatile long startedNanos;

	private volatile long bytesAtStart;

	/** Set when the node stops: a checkpoint its stop cuts off is not a failure. */
	private volatile boolean stopping;

	TransferLedger(Storage storage, Path folder, MembershipProperties settings) {
		this.storage = storage;
		this.folder = folder;
		this.checkpointNanos = settings.checkpointInterval().toNanos();
		this.progress = TransferProgress.read(folder);
	}

	/** The record of the change under way, or {@code null} before any. */
	@Nullable TransferProgress current() {
		return this.progress;
	}

	/** Whether the record is the one of {@code changeId}. */
	boolean isFor(String changeId) {
		TransferProgress current = this.progress;
		return current != null && current.change().equals(changeId);
	}

	/** Starts an empty record for {@code changeId}, its rate measured from now. */
	synchronized TransferProgress begin(String changeId) {
		TransferProgress fresh = new TransferProgress(changeId, Map.of());
		this.progress = fresh;
		this.startedNanos = System.nanoTime();
		this.bytesAtStart = 0;
		return fresh;
	}

	/**
	 * Measures the rate from now when the record was read from disk (a restart): the
	 * bytes received before it do not count.
	 */
	synchronized void resumeClock(TransferProgress current) {
		if (this.startedNanos == 0) {
			this.startedNanos = System.nanoTime();
			this.bytesAtStart = current.sources().values().stream().mapToLong(Source::bytes).sum();
		}
	}

	/** What a source said it will send in all, for the status. */
	void estimate(String source, long bytes) {
		this.estimates.put(source, bytes);
	}

	/** Records a batch written to storage: the stream's cursor moves past it. */
	synchronized void advance(String changeId, String source, byte[] cursor, int keys, long bytes, long scanned) {
		TransferProgress current = this.progress;
		if (current == null || !current.change().equals(changeId)) {
			return;
		}
		Source before = current.sources().getOrDefault(source, Source.FRESH);
		this.progress = current.with(source, new Source(cursor, false, before.keys() + keys, before.bytes() + bytes,
				Math.max(before.scanned(), scanned)));
	}

	/** A checkpoint when the last one is an interval old; nothing otherwise. */
	Mono<Void> checkpointIfDue() {
		if (System.nanoTime() - this.lastCheckpoint < this.checkpointNanos) {
			return Mono.empty();
		}
		this.lastCheckpoint = System.nanoTime();
		return checkpoint();
	}

	/** Makes what was written durable, then records the cursors that cover it. */
	private Mono<Void> checkpoint() {
		TransferProgress snapshot = this.progress;
		if (snapshot == null) {
			return Mono.empty();
		}
		return this.storage.flush().then(Mono.fromRunnable(() -> write(snapshot)).subscribeOn(this.files)).then();
	}

	/**
	 * Writes the cursors. A write the node's stop interrupts (its streams cancelled, this
	 * ledger's thread interrupted) leaves the last whole checkpoint on disk (the file is
	 * replaced atomically) and is only logged: the streams resume from that one.
	 */
	private void write(TransferProgress snapshot) {
		try {
			snapshot.write(this.folder);
		}
		catch (RuntimeException ex) {
			if (!this.stopping) {
				throw ex;
			}
			logger.debug("Transfer checkpoint cut off by the node's stop: " + ex.getMessage());
		}
	}

	/** The node stops: checkpoints cut off from now on are not failures. */
	void stopping() {
		this.stopping = true;
	}

	/** Marks a stream complete and makes that durable. */
	Mono<Void> finish(String changeId, String source) {
		return Mono.defer(() -> {
			synchronized (this) {
				TransferProgress current = this.progress;
				if (current == null || !current.change().equals(changeId)) {
					return Mono.empty();
				}
				Source before = current.sources().getOrDefault(source, Source.FRESH);
				this.progress = current.with(source,
						new Source(before.cursor(), true, before.keys(), before.bytes(), before.scanned()));
			}
			logger.info("Transfer of change " + changeId + " from " + source + " complete");
			return checkpoint();
		});
	}

	/** The status of {@link Transfers#status()}. */
	Map<String, Object> status(ClusterState state) {
		return TransferStatus.of(state, this.progress, this.estimates, this.startedNanos, this.bytesAtStart);
	}

	@Override
	public void close() {
		this.stopping = true;
		this.files.dispose();
	}

}
