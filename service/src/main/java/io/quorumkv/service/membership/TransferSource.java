package io.quorumkv.service.membership;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.RingChange;
import io.quorumkv.service.cluster.RingLayout;
import io.quorumkv.service.peer.EntryFrame;
import io.quorumkv.service.peer.Pacer;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The source side of a transfer ({@code GET /internal/v0/transfer}): this node's entries
 * that a target gains from it in the change under way ({@link TransferPlan}), read from
 * its storage in key order, lazily and with backpressure: the scan advances only as fast
 * as the target takes the frames. Now and then (about one key in {@value #PROGRESS_EVERY}
 * of those it skips) a progress frame tells the target how far the scan has come
 * ({@link TransferCodec}). The storage filters the scan by key
 * ({@link Storage#scan(byte[], byte[], java.util.function.Predicate)}): the LSM does not
 * copy the value of an entry the target does not gain, about three in four on five nodes
 * with RF 3. The scan runs on Reactor's bounded elastic threads, never on the event loop:
 * it reads (and mostly skips) several entries per entry sent, and on the event loop those
 * bursts held up the requests it serves. It goes no faster than the rate the target asks
 * for: backpressure alone stops it only once the sockets' buffers are full, megabytes (up
 * to 4 MiB of send buffer on Linux by default) read, encoded and sent at the start of
 * every stream as fast as the cores allow, a burst the requests this node serves waited
 * behind. Frames go out in chunks of up to {@value #CHUNK_FRAMES}, not one by one.
 */
public final class TransferSource {

	/**
	 * About one key in this many that the target does not gain comes out of the scan
	 * anyway, as a progress frame: chosen by a hash of the key, since the scan's filter
	 * must answer the same for every version of a key. A power of two.
	 */
	private static final int PROGRESS_EVERY = 512;

	/** How far ahead of the rate a chunk may go: 10 KB at 1 MB/s. */
	private static final Duration PACING_SLACK = Duration.ofMillis(10);

	/**
	 * Frames sent together as one chunk, at most; fewer when the scan has found no more
	 * for {@link #CHUNK_TIME}. One by one, each frame (about 130 bytes) was handed to the
	 * event loop that also serves this node's requests on its own: at 1 MB/s the source
	 * made 600-850 more writes a second than an idle one, 150-200 in chunks.
	 */
	private static final int CHUNK_FRAMES = 64;

	private static final Duration CHUNK_TIME = Duration.ofMillis(10);

	/** What {@link #size} counts for an entry besides its key and value. */
	private static final int ENTRY_OVERHEAD = 16;

	private final ClusterState state;

	private final Storage storage;

	TransferSource(ClusterState state, Storage storage) {
		this.state = state;
		this.storage = storage;
	}

	/**
	 * The frames owed to {@code target} from {@code start} on, at most
	 * {@code bytesPerSecond} of them a second (none: as fast as the target takes them).
	 * @throws ChangeMismatchException when the change under way here is not
	 * {@code changeId} in its streaming phase
	 */
	public Flux<byte[]> frames(String changeId, String target, byte[] start, @Nullable Long bytesPerSecond) {
		return frames(changeId, target, start, bytesPerSecond, null);
	}

	/**
	 * The frames owed to {@code target}, as above; with {@code onBehalfOf}, the keys that
	 * node (a source that died) owes it and of which this node holds a copy as an old
	 * owner: what a target asks of every other source once one of its sources stays
	 * unreachable, as Cassandra's bootstrap streams from another replica.
	 */
	public Flux<byte[]> frames(String changeId, String target, byte[] start, @Nullable Long bytesPerSecond,
			@Nullable String onBehalfOf) {
		return Flux.defer(() -> {
			RingLayout layout = this.state.layout();
			RingChange change = (layout != null) ? layout.ring().change() : null;
			if (change == null || !change.id().equals(changeId) || change.phase() != RingChange.Phase.STREAMING) {
				return Flux.error(new ChangeMismatchException(
						"change " + changeId + " is not streaming here (epoch " + this.state.epoch()
								+ ((change != null) ? ", " + change.phase().label() + " " + change.id() : ", no change")
								+ ")"));
			}
			TransferPlan plan = new TransferPlan(layout);
			String self = this.state.self().id();
			java.util.function.Predicate<byte[]> sends = (onBehalfOf == null) ? (key) -> plan.sends(key, self, target)
					: (key) -> plan.sends(key, onBehalfOf, target) && layout.isOldOwner(key, self);
			ScanTally tally = new ScanTally();
			Flux<byte[]> estimate = Flux.just(TransferCodec.estimate(estimatedBytes()));
			Flux<Entry> wanted = this.storage.scan(start, null, (key) -> {
				tally.looked(key);
				return sends.test(key) || marksProgress(key);
			});
			Flux<byte[]> frames = estimate.concatWith(wanted.concatMap((entry) -> {
				if (sends.test(entry.key())) {
					tally.sent(entry);
					return Mono.just(EntryFrame.encode(entry));
				}
				return Mono.just(TransferCodec.progress(entry.key(), tally.scannedBytes()));
			}, 64));
			Flux<byte[]> chunks = frames.bufferTimeout(CHUNK_FRAMES, CHUNK_TIME, Schedulers.boundedElastic(), true)
				.map(TransferSource::joined);
			if (bytesPerSecond == null) {
				return chunks;
			}
			Pacer pacer = new Pacer(bytesPerSecond, PACING_SLACK, Schedulers.boundedElastic());
			return chunks.concatMap((chunk) -> pacer.delay(chunk.length).thenReturn(chunk), 1);
		}).subscribeOn(Schedulers.boundedElastic(), true);
	}

	/**
	 * Whether a key the target does not gain goes out as a progress frame: one in about
	 * {@value #PROGRESS_EVERY}, by a hash of the key mixed so that keys differing in
	 * their last bytes spread over it.
	 */
	static boolean marksProgress(byte[] key) {
		return ((Arrays.hashCode(key) * 0x9E3779B9) >>> (32 - Integer.numberOfTrailingZeros(PROGRESS_EVERY))) == 0;
	}

	/**
	 * What a scan looked at, as the storage's filter and the frames see it. The filter
	 * sees keys only (the storage skips the values of the entries it rejects), so the
	 * bytes of the entries it skips are estimated: their keys, plus the mean value of the
	 * entries sent so far (the target's keys are spread over the key space by hash, a
	 * fair sample). Updated on the scan's thread, read on the frames'.
	 */
	private static final class ScanTally {

		private final AtomicLong keys = new AtomicLong();

		private final AtomicLong keyBytes = new AtomicLong();

		private final AtomicLong sent = new AtomicLong();

		private final AtomicLong sentValueBytes = new AtomicLong();

		void looked(byte[] key) {
			this.keys.incrementAndGet();
			this.keyBytes.addAndGet(key.length + ENTRY_OVERHEAD);
		}

		void sent(Entry entry) {
			this.sent.incrementAndGet();
			this.sentValueBytes.addAndGet(size(entry) - entry.key().length - ENTRY_OVERHEAD);
		}

		long scannedBytes() {
			long sentCount = this.sent.get();
			long meanValue = (sentCount > 0) ? this.sentValueBytes.get() / sentCount : 0;
			return this.keyBytes.get() + this.keys.get() * meanValue;
		}

	}

	/** Frames one after the other, as the target reads them (cut anywhere). */
	static byte[] joined(List<byte[]> frames) {
		if (frames.size() == 1) {
			return frames.getFirst();
		}
		int length = 0;
		for (byte[] frame : frames) {
			length += frame.length;
		}
		byte[] chunk = new byte[length];
		int offset = 0;
		for (byte[] frame : frames) {
			System.arraycopy(frame, 0, chunk, offset, frame.length);
			offset += frame.length;
		}
		return chunk;
	}

	/**
	 * An estimate of what a full scan reads, from the storage's statistics; -1 if none.
	 */
	public long estimatedBytes() {
		Long disk = this.storage.stats().gauges().get("disk.bytes");
		return (disk != null) ? disk : -1;
	}

	static long size(Entry entry) {
		byte[] value = entry.value();
		return entry.key().length + ((value != null) ? value.length : 0) + ENTRY_OVERHEAD;
	}

	/** The transfer asked for is not the change under way on this node. */
	public static final class ChangeMismatchException extends RuntimeException {

		ChangeMismatchException(String message) {
			super(message, null, false, false);
		}

	}

}
