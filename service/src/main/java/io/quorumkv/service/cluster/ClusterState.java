package io.quorumkv.service.cluster;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * This node and the ring it serves under: the one reference every request reads
 * ({@link #layout()}, never blocking), replaced whole when the node agrees to a newer
 * ring.
 *
 * <p>
 * Every change of the node's ring runs on one thread of its own ({@link #ringThread()}),
 * which serialises the changes without a lock and keeps their file I/O off the event
 * loops: a newer ring is written to the data folder ({@link RingFile}) before it is
 * published, so a node never serves under a ring it could lose in a crash. A node that
 * was never seeded and never joined has no ring: it serves no data until a join gives it
 * one.
 */
public final class ClusterState implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(ClusterState.class);

	private volatile Node self;

	private final RingFile file;

	private final Duration drainLimit;

	private final AtomicReference<@Nullable RingLayout> layout = new AtomicReference<>();

	private volatile @Nullable String stamp;

	private final List<Consumer<Ring>> listeners = new CopyOnWriteArrayList<>();

	private final Scheduler ringThread = Schedulers.newSingle("quorumkv-ring", true);

	/**
	 * Whether this node's ring is known to be current: false from a restart under a ring
	 * kept durably until the metadata group confirmed it (the cluster may have moved on
	 * while the node was down, and a node coordinating under an older ring may read
	 * copies that writes of the newer one no longer reach).
	 */
	private volatile boolean confirmed;

	/** Completed by {@link #confirm()}: what requests waiting for it wait on. */
	private final Sinks.Empty<Void> confirmation = Sinks.empty();

	/**
	 * @param self this node, its id from its data folder
	 * @param file where the ring is kept
	 * @param ring the ring read from the data folder or seeded, null for a node that
	 * waits to be joined
	 * @param drainLimit the longest a new ring waits for the requests coordinated under
	 * the previous one
	 * @param confirmed whether the ring is known to be current (seeded by a first start,
	 * none, or one with no other node); see {@link #confirmed()}
	 */
	ClusterState(Node self, RingFile file, @Nullable Ring ring, Duration drainLimit, boolean confirmed) {
		this.self = self;
		this.file = file;
		this.drainLimit = drainLimit;
		this.confirmed = confirmed;
		if (ring != null) {
			publish(new RingLayout(ring));
		}
	}

	private void publish(RingLayout next) {
		this.layout.set(next);
		this.stamp = RingStamp.format(next.ring(), this.self);
	}

	/**
	 * What this node's internal calls and answers carry ({@link RingStamp}); null while
	 * it has no ring.
	 */
	public @Nullable String stamp() {
		return this.stamp;
	}

	public Node self() {
		return this.self;
	}

	/** The current layout; null while the node has no ring. */
	public @Nullable RingLayout layout() {
		return this.layout.get();
	}

	/**
	 * The layout to coordinate a request under: this node's, when it is a member and the
	 * metadata group has confirmed its ring.
	 * @throws NotServingException when this node has no ring, was removed, or restarted
	 * and its ring is not confirmed yet
	 */
	public RingLayout servingLayout() {
		RingLayout layout = memberLayout();
		if (!this.confirmed) {
			throw new NotServingException("this node restarted under ring epoch " + layout.epoch()
					+ " and coordinates once the metadata group has confirmed that ring is current");
		}
		return layout;
	}

	/**
	 * The current layout, this node a member of its ring.
	 * @throws NotServingException when this node has no ring or was removed
	 */
	public RingLayout memberLayout() {
		RingLayout layout = this.layout.get();
		if (layout == null) {
			throw new NotServingException("this node is not a member of a cluster yet: join it first");
		}
		// One lookup per call: a node of the ring that is no member was removed.
		if (layout.ring().node(this.self.id()).filter((self) -> self.state() == NodeState.REMOVED).isPresent()) {
			throw new NotServingException("this node was removed from the cluster");
		}
		return layout;
	}

	public Optional<Ring> ring() {
		RingLayout current = this.layout.get();
		return (current != null) ? Optional.of(current.ring()) : Optional.empty();
	}

	/**
	 * Whether this node's ring is known to be current, so that it may coordinate
	 * requests: always but after a restart under a ring kept durably, until
	 * {@link #confirm()}.
	 */
	public boolean confirmed() {
		return this.confirmed;
	}

	/**
	 * Marks the ring current: the metadata group's ring (read through its leader) was not
	 * newer, or has been installed.
	 */
	public void confirm() {
		this.confirmed = true;
		this.confirmation.tryEmitEmpty();
	}

	/**
	 * Completes once the ring is confirmed ({@link #confirmed()}): at once when it is,
	 * else at {@link #confirm()}, or after {@code limit} at most.
	 */
	public Mono<Void> whenConfirmed(Duration limit) {
		return this.confirmed ? Mono.empty() : this.confirmation.asMono().timeout(limit, Mono.empty());
	}

	/** The current epoch; 0 while the node has no ring. */
	public long epoch() {
		RingLayout current = this.layout.get();
		return (current != null) ? current.epoch() : 0;
	}

	/** The thread every change of the node's ring (and its agreement state) runs on. */
	public Scheduler ringThread() {
		return this.ringThread;
	}

	/** Called on the ring thread after each newer ring is published. */
	public void onChange(Consumer<Ring> listener) {
		this.listeners.add(listener);
	}

	/**
	 * Adopts a newer ring of this node's cluster (or the first one of a node waiting to
	 * be joined): kept durably, then published. Completes with whether the ring was newer
	 * once the requests coordinated under the previous ring are decided (at most the
	 * drain limit), so that whoever acknowledges the ring to a peer knows no request of
	 * the older one is still under way here.
	 */
	public Mono<Boolean> install(Ring ring) {
		return Mono.fromCallable(() -> installNow(ring)).subscribeOn(this.ringThread).flatMap((previous) -> {
			if (previous.isEmpty()) {
				return Mono.just(false);
			}
			RingLayout old = previous.get().layout;
			return (old == null) ? Mono.just(true) : drained(old).thenReturn(true);
		});
	}

	/** Must run on the ring thread. Empty when the ring is not newer. */
	private Optional<Previous> installNow(Ring ring) {
		RingLayout current = this.layout.get();
		if (current == null) {
			adoptReplacedId(ring);
		}
		else {
			Ring mine = current.ring();
			if (!mine.clusterId().equals(ring.clusterId())) {
				throw new IllegalArgumentException(
						"ring of cluster " + ring.clusterId() + " refused: this node is of " + mine.clusterId());
			}
			if (ring.epoch() <= mine.epoch()) {
				return Optional.empty();
			}
		}
		this.file.write(ring);
		publish(new RingLayout(ring));
		logger.info("Now serving under " + ring.describe()
				+ ((current != null) ? " (was epoch " + current.epoch() + ")" : ""));
		for (Consumer<Ring> listener : this.listeners) {
			try {
				listener.accept(ring);
			}
			catch (RuntimeException ex) {
				logger.warn("A ring listener failed on epoch " + ring.epoch(), ex);
			}
		}
		return Optional.of(new Previous(current));
	}

	/**
	 * A new node that replaces a dead one takes the dead node's id (and so its place):
	 * the first ring it gets lists its URL under that id. The id is kept in the data
	 * folder before the ring is.
	 */
	private void adoptReplacedId(Ring ring) {
		if (ring.node(this.self.id()).isPresent()) {
			return;
		}
		ring.nodeAt(this.self.url()).ifPresent((listed) -> {
			NodeIdentity.replace(this.file.path().getParent(), listed.id());
			logger.info("This node replaces node " + listed.id() + " and takes its id (was " + this.self.id() + ")");
			this.self = new Node(listed.id(), this.self.url());
		});
	}

	/** Waits until the requests coordinated under {@code old} are decided. */
	private Mono<Void> drained(RingLayout old) {
		return until(() -> old.inFlight().get() <= 0, Duration.ofMillis(10), this.drainLimit);
	}

	/**
	 * Completes once this node serves under an epoch above {@code epoch}, or after
	 * {@code limit} at most.
	 */
	public Mono<Void> servingAbove(long epoch, Duration limit) {
		return until(() -> epoch() > epoch, Duration.ofMillis(5), limit);
	}

	/**
	 * Completes once {@code condition} holds, checked at once and then every
	 * {@code every}, or after {@code limit} at most.
	 */
	private static Mono<Void> until(BooleanSupplier condition, Duration every, Duration limit) {
		return Flux.interval(Duration.ZERO, every).takeUntil((tick) -> condition.getAsBoolean()).take(limit).then();
	}

	@Override
	public void close() {
		this.ringThread.dispose();
	}

	private record Previous(@Nullable RingLayout layout) {
	}

}
