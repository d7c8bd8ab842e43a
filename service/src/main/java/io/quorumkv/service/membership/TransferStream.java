package io.quorumkv.service.membership;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.membership.TransferCodec.Frame;
import io.quorumkv.service.membership.TransferProgress.Source;
import io.quorumkv.service.peer.FrameDecoder;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.peer.Pacer;
import io.quorumkv.service.peer.PeerClient;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * One transfer stream from a source, received and written: it asks the source for the
 * keys after the stream's cursor ({@code GET /internal/v0/transfer}), decodes the frames
 * off the event loops, writes them in batches ({@link Storage#upsertAll}) at the rate
 * limit all streams share, and moves the cursor in the {@link TransferLedger}.
 */
final class TransferStream implements AutoCloseable {

	/**
	 * Received chunks queued for the writer per stream (Reactor Netty's, of up to 64
	 * KiB).
	 */
	private static final int WRITER_PREFETCH = 32;

	private final PeerClient peers;

	private final Storage storage;

	private final TransferLedger ledger;

	private final MembershipProperties settings;

	private final int maxFrameSize;

	private final Pacer pacer;

	/**
	 * Where the received streams are decoded and written to storage: one thread for all
	 * of them, off the event loops. Written on the event loop that read them, 1 MB
	 * batches held that loop for milliseconds at a time, and the replica calls it serves
	 * waited behind them (a joining node answered replica calls at p50 90-134 ms against
	 * 1 ms for the other nodes, docs/performance.md). A thread that may wait (a storage
	 * write stall), hence a bounded elastic one.
	 */
	private final Scheduler writer = Schedulers.newBoundedElastic(1, 1024, "quorumkv-transfer-writer", 60, true);

	private final Counter keysCounter;

	private final Counter bytesCounter;

	TransferStream(PeerClient peers, Storage storage, TransferLedger ledger, MembershipProperties settings,
			int maxFrameSize, MeterRegistry meters) {
		this.peers = peers;
		this.storage = storage;
		this.ledger = ledger;
		this.settings = settings;
		this.maxFrameSize = maxFrameSize;
		this.pacer = new Pacer(settings.streamRate().toBytes(), Duration.ZERO, Schedulers.parallel());
		this.keysCounter = Counter.builder("quorumkv.membership.streamed.keys")
			.description("Entries received from transfers of membership changes")
			.register(meters);
		this.bytesCounter = Counter.builder("quorumkv.membership.streamed.bytes")
			.description("Bytes of entries received from transfers of membership changes")
			.baseUnit("bytes")
			.register(meters);
	}

	/**
	 * The stream {@code id} of a change from {@code source} (for {@code onBehalfOf}'s
	 * share when a dead source's keys come from another), resumed after its recorded
	 * cursor.
	 */
	Flux<Void> open(String changeId, Node source, @Nullable String onBehalfOf, String id) {
		TransferProgress current = this.ledger.current();
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
				case Frame.Estimate estimate -> this.ledger.estimate(source, estimate.bytes());
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
				this.ledger.advance(changeId, source, cursor, entries.size(), size, scannedSoFar);
			}
			return this.ledger.checkpointIfDue();
		}));
	}

	/** The smallest key after {@code key}. */
	static byte[] successor(byte[] key) {
		byte[] next = Arrays.copyOf(key, key.length + 1);
		next[key.length] = 0;
		return next;
	}

	@Override
	public void close() {
		this.writer.dispose();
	}

}
