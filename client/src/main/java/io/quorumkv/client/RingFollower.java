package io.quorumkv.client;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.netty.handler.codec.http.HttpMethod;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.scheduler.Schedulers;

/**
 * Keeps the ring the client routes by ({@code GET /v0/ring}), following its epoch.
 *
 * <p>
 * The nodes put the epoch of their ring on their public answers
 * ({@code X-QuorumKV-Epoch}): an answer naming an epoch newer than the ring held makes
 * the client read the ring from the node that gave it ({@link #announced}), once per
 * epoch announced, so a burst of answers after a change costs one read. Besides, it reads
 * the ring again every {@code interval} once it has one (nodes that do not name their
 * epoch, a change no answer has shown yet), and sooner, at most once per {@code gap} (a
 * second), when it has none, when the last read failed, or when a node suggests the ring
 * moved ({@link #suspectStale}: a 503, a refused connection): a cluster without a ring
 * endpoint costs a request a second, not one per request. A fetch is started by the
 * request that finds it due (or by the answer that announced the epoch) and runs in the
 * background (that request is routed by the ring as it is), one at a time, from the seeds
 * and ring nodes in turn, the healthy first. A ring replaces the one held only when its
 * epoch is newer and its cluster the same: a node behind cannot take the client back.
 * Holds one ring; nothing else grows.
 */
final class RingFollower implements AutoCloseable {

	static final String PATH = "/v0/ring";

	private final Transport transport;

	private final List<URI> seeds;

	private final NodeHealth health;

	private final String scheme;

	private final long intervalNanos;

	private final long gapNanos;

	private final AtomicReference<@Nullable RingView> ring = new AtomicReference<>();

	private final AtomicBoolean fetching = new AtomicBoolean();

	private final AtomicInteger turn = new AtomicInteger();

	private final Disposable.Swap inFlight = Disposables.swap();

	/** System.nanoTime() of the last fetch started. */
	private volatile long lastStart;

	/** System.nanoTime() from which the next fetch is due without a suspicion. */
	private volatile long nextDue;

	/** The highest epoch an answer announced that a fetch was started for. */
	private volatile long asked;

	private volatile boolean closed;

	RingFollower(Transport transport, List<URI> seeds, NodeHealth health, Duration interval) {
		this.transport = transport;
		this.seeds = List.copyOf(seeds);
		this.health = health;
		this.scheme = Objects.requireNonNull(this.seeds.get(0).getScheme(), "scheme");
		this.intervalNanos = interval.toNanos();
		this.gapNanos = Math.min(this.intervalNanos, Duration.ofSeconds(1).toNanos());
		long now = System.nanoTime();
		this.lastStart = now - this.gapNanos;
		this.nextDue = now;
	}

	/** The ring held, or null; starts a fetch when one is due. */
	@Nullable RingView current() {
		long now = System.nanoTime();
		if (now - this.nextDue >= 0) {
			fetch(now);
		}
		return this.ring.get();
	}

	/** The ring held, or null, without starting a fetch. */
	@Nullable RingView held() {
		return this.ring.get();
	}

	/**
	 * A node's answer suggests the ring changed: fetch it, unless one was just fetched.
	 */
	void suspectStale() {
		long now = System.nanoTime();
		if (now - (this.lastStart + this.gapNanos) >= 0) {
			fetch(now);
		}
	}

	/**
	 * A node's answer named its ring's {@code epoch} (the header's text): when that is
	 * newer than the ring held and than every epoch already asked for, the ring is read
	 * from that node, unless a read is under way (its outcome decides what comes next).
	 * Called on an event loop for every answer: compares, and starts at most one fetch.
	 */
	void announced(URI node, String epoch) {
		RingView held = this.ring.get();
		if (held == null) {
			// The first read is under way or due: current() starts it.
			return;
		}
		long announced;
		try {
			announced = Long.parseLong(epoch);
		}
		catch (NumberFormatException ex) {
			return;
		}
		if (announced <= held.epoch() || announced <= this.asked) {
			return;
		}
		if (fetch(System.nanoTime(), node)) {
			this.asked = announced;
		}
	}

	private void fetch(long now) {
		fetch(now, null);
	}

	/**
	 * Starts a read of the ring from {@code from}, or from the next node in turn when
	 * null; false when one is under way (or the client is closed).
	 */
	private boolean fetch(long now, @Nullable URI from) {
		if (this.closed || !this.fetching.compareAndSet(false, true)) {
			return false;
		}
		this.lastStart = now;
		// Until it answers, no other fetch is due; the outcome sets the next time.
		this.nextDue = now + this.intervalNanos;
		URI node = (from != null) ? from : pick();
		this.inFlight.update(this.transport.exchange(HttpMethod.GET, node, PATH, null)
			.publishOn(Schedulers.parallel())
			.map((answer) -> {
				if (answer.status() == 404) {
					throw new IllegalArgumentException(node + " has no ring endpoint");
				}
				if (answer.status() != 200) {
					throw new IllegalStateException(node + " answered " + answer.status());
				}
				return RingView.parse(new String(answer.body(), StandardCharsets.UTF_8), this.scheme);
			})
			.doFinally((signal) -> this.fetching.set(false))
			.subscribe(this::adopt, this::failed));
		return true;
	}

	private void adopt(RingView fetched) {
		RingView held = this.ring.get();
		if (held == null || (fetched.clusterId().equals(held.clusterId()) && fetched.epoch() > held.epoch())) {
			this.ring.set(fetched);
			this.health.track(fetched.nodes());
		}
		// A ring older than an epoch announced (read from a node behind) is read again
		// after the gap, not after the interval.
		RingView now = this.ring.get();
		boolean behind = now != null && now.epoch() < this.asked;
		this.nextDue = System.nanoTime() + (behind ? this.gapNanos : this.intervalNanos);
	}

	private void failed(Throwable error) {
		// A ring the client cannot use is read again after the interval (it will not
		// change sooner); after another failure the next request past the gap tries the
		// next node: the ring may have moved (the node that failed may be one that left).
		boolean unusable = error instanceof IllegalArgumentException;
		this.nextDue = System.nanoTime() + (unusable ? this.intervalNanos : this.gapNanos);
	}

	/** The seeds, then the ring's members; the first healthy one from this turn on. */
	private URI pick() {
		Set<URI> unique = new LinkedHashSet<>(this.seeds);
		RingView held = this.ring.get();
		if (held != null) {
			unique.addAll(held.members());
		}
		List<URI> candidates = new ArrayList<>(unique);
		int start = Math.floorMod(this.turn.getAndIncrement(), candidates.size());
		long now = System.nanoTime();
		for (int i = 0; i < candidates.size(); i++) {
			URI candidate = candidates.get((start + i) % candidates.size());
			if (!this.health.isDown(candidate, now)) {
				return candidate;
			}
		}
		return candidates.get(start);
	}

	@Override
	public void close() {
		this.closed = true;
		this.inFlight.dispose();
	}

}
