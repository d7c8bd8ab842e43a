package io.quorumkv.service.membership;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.RingChange;
import io.quorumkv.service.cluster.RingLayout;
import io.quorumkv.service.membership.TransferCodec.Frame;
import io.quorumkv.service.membership.TransferProgress.Source;
import io.quorumkv.service.peer.FrameDecoder;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.peer.Pacer;
import io.quorumkv.service.peer.PeerClient;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/**
 * The target side of a change's streaming phase: this node pulls the keys it gains from
 * each of its sources ({@link TransferPlan}), one stream per source through the one peer
 * transport ({@code GET /internal/v0/transfer}), at most {@code stream-sources} of them
 * at once (the others start as those end), with backpressure down to the source's storage
 * scan and at a rate limit shared by all its streams. Entries are written in batches
 * ({@link Storage#upsertAll}); every checkpoint interval they are made durable and each
 * stream's cursor is recorded ({@link TransferProgress}), so a stream broken by a restart
 * of either end resumes after its cursor. A stream that fails is retried with backoff
 * until it completes or the ring moves on.
 */
public final class Transfers implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(Transfers.class);

	/**
	 * Failed attempts in a row after which a source is given up on (about 9 s of backoff
	 * for a source that refuses connections): its share comes from the other sources.
	 */
	private static final int FAILOVER_AFTER = 6;

	/**
	 * Received chunks queued for the writer per stream (Reactor Netty's, of up to 64
	 * KiB).
	 */
	private static final int WRITER_PREFETCH = 32;

	private final ClusterState state;

	private final PeerClient peers;

	private final Storage storage;

	private final Path folder;

	private final MembershipProperties settings;

	private final int maxFrameSize;

	private final Pacer pacer;

	private final Scheduler files = Schedulers.newSingle("quorumkv-transfers", true);

	/**
	 * Where the received streams are decoded and written to storage: one thread for all
	 * of them, off the event loops. Written on the event loop that read them, 1 MB
	 * batches held that loop for milliseconds at a time, and the replica calls it serves
	 * waited behind them (a joining node answered replica calls at p50 90-134 ms against
	 * 1 ms for the other nodes, docs/performance.md). A thread that may wait (a storage
	 * write stall), hence a bounded elastic one.
	 */
	private final Scheduler writer = Schedulers.newBoundedElastic(1, 1024, "quorumkv-transfer-writer", 60, true);

	private final Map<String, Disposable> running = new ConcurrentHashMap<>();

	/** Sources given up on in the change under way: their share comes from the others. */
	private final java.util.Set<String> failedOver = ConcurrentHashMap.newKeySet();

	private final Map<String, Long> estimates = new ConcurrentHashMap<>();

	private final Counter keysCounter;

	private final Counter bytesCounter;

	private volatile @Nullable TransferProgress progress;

	private volatile long lastCheckpoint = System.nanoTime();

	private volatile long startedNanos;

	private volatile long bytesAtStart;

	Transfers(ClusterState state, PeerClient peers, Storage storage, Path folder, MembershipProperties settings,
			int maxFrameSize, MeterRegistry meters) {
		this.state = state;
		this.peers = peers;
		this.storage = storage;
		this.folder = folder;
		this.settings = settings;
		this.maxFrameSize = maxFrameSize;
		this.pacer = new Pacer(settings.streamRate().toBytes(), Duration.ZERO, Schedulers.parallel());
		this.progress = TransferProgress.read(folder);
		this.keysCounter = Counter.builder("quorumkv.membership.streamed.keys")
			.description("Entries received from transfers of membership changes")
			.register(meters);
		this.bytesCounter = Counter.builder("quorumkv.membership.streamed.bytes")
			.description("Bytes of entries received from transfers of membership changes")
			.baseUnit("bytes")
			.register(meters);
		state.onChange((ring) -> reconcile());
	}

	/**
	 * Starts (or stops) this node's streams to match the ring: called on start and on
	 * every new ring.
	 */
	synchronized void reconcile() {
		RingLayout layout = this.state.layout();
		RingChange change = (layout != null) ? layout.ring().change() : null;
		String self = this.state.self().id();
		if (change == null || change.phase() != RingChange.Phase.STREAMING) {
			stopAll();
			return;
		}
		TransferPlan plan = new TransferPlan(layout);
		if (plan.targets().stream().noneMatch((node) -> node.id().equals(self))) {
			stopAll();
			return;
		}
		TransferProgress current = this.progress;
		if (current == null || !current.change().equals(change.id())) {
			stopAll();
			current = new TransferProgress(change.id(), Map.of());
			this.progress = current;
			this.startedNanos = System.nanoTime();
			this.bytesAtStart = 0;
		}
		else if (this.startedNanos == 0) {
			this.startedNanos = System.nanoTime();
			this.bytesAtStart = current.sources().values().stream().mapToLong(Source::bytes).sum();
		}
		List<Node> sources = plan.sources(self);
		for (Node source : sources) {
			Source done = current.sources().getOrDefault(source.id(), Source.FRESH);
			if (done.done()) {
				continue;
			}
			if (this.failedOver.contains(source.id())) {
				substitute(change.id(), current, source, sources);
				continue;
			}
			if (this.running.size() >= this.settings.streamSources()) {
				break;
			}
			if (!this.running.containsKey(source.id())) {
				logger.info("Pulling the keys of change " + change.id() + " from " + source
						+ ((done.cursor() != null) ? " (resuming after " + done.keys() + " keys)" : ""));
				this.running.put(source.id(), pull(change.id(), source, null, source.id()));
			}
		}
	}

	/**
	 * Pulls what the unreachable {@code dead} owes this node from every other source,
	 * each sending the keys of which it holds a copy; once all those streams are
	 * complete, the dead source's share is.
	 */
	private void substitute(String changeId, TransferProgress current, Node dead, List<Node> sources) {
		boolean all = true;
		for (Node other : sources) {
			if (other.id().equals(dead.id()) || this.failedOver.contains(other.id())) {
				continue;
			}
			String id = dead.id() + "@" + other.id();
			if (current.sources().getOrDefault(id, Source.FRESH).done()) {
				continue;
			}
			all = false;
			if (!this.running.containsKey(id) && this.running.size() < this.settings.streamSources()) {
				logger
					.info("Pulling the keys of change " + changeId + " that " + dead + " owes this node from " + other);
				this.running.put(id, pull(changeId, other, dead.id(), id));
			}
		}
		if (all && !this.running.containsKey(dead.id())) {
			// In the map before it starts: the record may complete before subscribe
			// returns.
			Disposable.Swap slot = reactor.core.Disposables.swap();
			this.running.put(dead.id(), slot);
			slot.update(finish(changeId, dead.id()).subscribe(null, (error) -> {
				this.running.remove(dead.id(), slot);
				logger.warn("Recording the share of " + dead + " complete failed: " + error.getMessage());
			}, () -> {
				this.running.remove(dead.id(), slot);
				reconcile();
			}));
		}
	}

	/** Gives up on a source that stays unreachable: its share comes from the others. */
	private synchronized void failOver(String changeId, Node source) {
		TransferProgress current = this.progress;
		if (current == null || !current.change().equals(changeId) || !this.failedOver.add(source.id())) {
			return;
		}
		logger.warn("Source " + source + " of change " + changeId + " stays unreachable: pulling its share from the "
				+ "other sources");
		Disposable pull = this.running.remove(source.id());
		if (pull != null) {
			pull.dispose();
		}
		reconcile();
	}

	private void stopAll() {
		this.running.values().forEach(Disposable::dispose);
		this.running.clear();
		this.failedOver.clear();
	}

	private Disposable pull(String changeId, Node source, @Nullable String onBehalfOf, String id) {
		return Flux.defer(() -> stream(changeId, source, onBehalfOf, id))
			.retryWhen(Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(200))
				.maxBackoff(Duration.ofSeconds(3))
				.doBeforeRetry((signal) -> {
					logger.info("Transfer from " + source + " interrupted (" + signal.failure().getMessage()
							+ "); resuming from its cursor");
					if (onBehalfOf == null && signal.totalRetries() + 1 >= FAILOVER_AFTER) {
						Schedulers.boundedElastic().schedule(() -> failOver(changeId, source));
					}
				}))
			.then(finish(changeId, id))
			.subscribe(null, (error) -> logger.warn("Transfer from " + source + " stopped: " + error.getMessage()),
					() -> {
						this.running.remove(id);
						reconcile();
					});
	}

	private Flux<Void> stream(String changeId, Node source, @Nullable String onBehalfOf, String id) {
		TransferProgress current = this.progress;
		Source from = (current != null) ? current.sources().getOrDefault(id, Source.FRESH) : Source.FRESH;
		byte[] start = (from.cursor() != null) ? successor(from.cursor()) : new byte[0];
		FrameDecoder<TransferCodec.Frame> decoder = TransferCodec.decoder(this.maxFrameSize);
		// The source sends no faster than this node takes: otherwise it scans and sends
		// as fast as it can until the sockets' buffers (megabytes) are full, a burst of
		// CPU the requests it serves wait behind.
		String path = InternalApi.TRANSFER_PATH + "?change=" + InternalApi.encodeKey(changeId.getBytes()) + "&start="
				+ InternalApi.encodeKey(start) + "&rate=" + this.settings.streamRate().toBytes()
				+ ((onBehalfOf != null) ? "&for=" + InternalApi.encodeKey(onBehalfOf.getBytes()) : "");
		Duration idle = this.settings.callTimeout().multipliedBy(6);
		return this.peers.stream(source, path, idle)
			.publishOn(this.writer, WRITER_PREFETCH)
			.concatMapIterable(decoder::decode)
			.bufferUntil(new BatchCutter(this.settings.streamBatch().toBytes()))
			.concatMap((frames) -> apply(changeId, id, frames), 1)
			.concatWith(Mono.defer(() -> decoder.isComplete() ? Mono.empty()
					: Mono.error(new IllegalStateException("stream ended inside a frame"))));
	}

	private Mono<Void> apply(String changeId, String source, List<Frame> frames) {
		List<Entry> entries = new ArrayList<>(frames.size());
		long bytes = 0;
		long scanned = -1;
		byte[] last = null;
		for (Frame frame : frames) {
			switch (frame) {
				case Frame.Data data -> {
					entries.add(data.entry());
					bytes += TransferSource.size(data.entry());
					last = data.key();
				}
				case Frame.Progress progress -> {
					scanned = progress.scannedBytes();
					last = progress.key();
				}
				case Frame.Estimate estimate -> this.estimates.put(source, estimate.bytes());
			}
		}
		byte[] cursor = last;
		long size = bytes;
		long scannedSoFar = scanned;
		Mono<Void> write = entries.isEmpty() ? Mono.empty() : this.storage.upsertAll(entries);
		return this.pacer.delay(size).then(write).then(Mono.defer(() -> {
			this.keysCounter.increment(entries.size());
			this.bytesCounter.increment(size);
			if (cursor != null) {
				advance(changeId, source, cursor, entries.size(), size, scannedSoFar);
			}
			return checkpointIfDue();
		}));
	}

	private synchronized void advance(String changeId, String source, byte[] cursor, int keys, long bytes,
			long scanned) {
		TransferProgress current = this.progress;
		if (current == null || !current.change().equals(changeId)) {
			return;
		}
		Source before = current.sources().getOrDefault(source, Source.FRESH);
		this.progress = current.with(source, new Source(cursor, false, before.keys() + keys, before.bytes() + bytes,
				Math.max(before.scanned(), scanned)));
	}

	private Mono<Void> checkpointIfDue() {
		if (System.nanoTime() - this.lastCheckpoint < this.settings.checkpointInterval().toNanos()) {
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
		return this.storage.flush()
			.then(Mono.fromRunnable(() -> snapshot.write(this.folder)).subscribeOn(this.files))
			.then();
	}

	private Mono<Void> finish(String changeId, String source) {
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

	/**
	 * This node's part in the change under way: whether it receives keys, and how far
	 * each stream has come; {@code done} once every stream is complete and durable
	 * ({@link TransferStatus}).
	 */
	public Map<String, Object> status() {
		return TransferStatus.of(this.state, this.progress, this.estimates, this.startedNanos, this.bytesAtStart);
	}

	/** The smallest key after {@code key}. */
	static byte[] successor(byte[] key) {
		byte[] next = Arrays.copyOf(key, key.length + 1);
		next[key.length] = 0;
		return next;
	}

	@Override
	public void close() {
		stopAll();
		this.files.dispose();
		this.writer.dispose();
	}

}
