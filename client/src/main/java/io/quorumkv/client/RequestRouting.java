package io.quorumkv.client;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import org.jspecify.annotations.Nullable;

/**
 * Which nodes a request goes to, and how many went to a replica of their key.
 *
 * <p>
 * With {@link QuorumKvClientBuilder.Routing#REPLICA_AWARE} and a ring known
 * ({@link RingFollower}), a request with a key goes to the key's replicas first, those
 * not marked down taking turns (a node is marked down for {@code nodeDownTime} after a
 * failed connection, up again once it answers), then to the ring's other members, then to
 * seeds outside the ring, the nodes marked down last: a retry reaches another replica
 * before it leaves them, and a request still finds a node when every replica is down. Any
 * node coordinates any key, so a plan is never wrong, only a hop longer. Without a ring
 * (not read yet, or {@link QuorumKvClientBuilder.Routing#ANY_NODE}, or a custom
 * {@link Router}) and for scans, the {@link Router} plans over the seeds as before.
 */
final class RequestRouting implements AutoCloseable {

	private final Router router;

	private final NodeHealth health;

	private final List<URI> seeds;

	private final @Nullable RingFollower ring;

	private final AtomicInteger turn = new AtomicInteger();

	private volatile @Nullable Outside outside;

	private final LongAdder toReplica = new LongAdder();

	private final LongAdder toOtherNode = new LongAdder();

	private final LongAdder withoutRing = new LongAdder();

	RequestRouting(ClientConfig config, Transport transport) {
		this.seeds = config.seeds();
		this.health = new NodeHealth(this.seeds, config.nodeDownTime());
		Router custom = config.router();
		this.router = (custom != null) ? custom : Router.roundRobin();
		this.ring = (custom == null && config.routing() == QuorumKvClientBuilder.Routing.REPLICA_AWARE)
				? new RingFollower(transport, this.seeds, this.health, config.ringRefreshInterval()) : null;
		if (this.ring != null) {
			// An answer naming a newer epoch makes the client read the ring again.
			transport.onEpoch(this.ring::announced);
			// The first read starts with the client, so that its first requests may find
			// the ring already; they do not wait for it.
			this.ring.current();
		}
	}

	NodeHealth health() {
		return this.health;
	}

	/**
	 * The nodes to try for one request, preferred first.
	 * @param key the key's bytes, or null for a scan
	 */
	Plan plan(byte @Nullable [] key) {
		RingView view = (key != null && this.ring != null) ? this.ring.current() : null;
		if (key == null || view == null) {
			return new Plan(this.router.plan(key, this.health.view()), null, key != null);
		}
		List<URI> replicas = view.replicas(key);
		List<URI> others = new ArrayList<>(view.members().size());
		for (URI member : view.members()) {
			if (!replicas.contains(member)) {
				others.add(member);
			}
		}
		List<URI> outside = outside(view);
		int turn = this.turn.getAndIncrement();
		long now = System.nanoTime();
		List<URI> plan = new ArrayList<>(replicas.size() + others.size() + outside.size());
		List<URI> down = new ArrayList<>();
		for (List<URI> group : List.of(replicas, others, outside)) {
			int start = group.isEmpty() ? 0 : Math.floorMod(turn, group.size());
			for (int i = 0; i < group.size(); i++) {
				URI node = group.get((start + i) % group.size());
				(this.health.isDown(node, now) ? down : plan).add(node);
			}
		}
		plan.addAll(down);
		return new Plan(plan, Set.copyOf(replicas), true);
	}

	/**
	 * The seeds outside {@code view}'s nodes, worked out once per ring, not per request.
	 */
	private List<URI> outside(RingView view) {
		Outside known = this.outside;
		if (known != null && known.view() == view) {
			return known.seeds();
		}
		List<URI> seeds = this.seeds.stream().filter((seed) -> !view.nodes().contains(seed)).toList();
		this.outside = new Outside(view, seeds);
		return seeds;
	}

	/** The seeds outside a ring's nodes. */
	private record Outside(RingView view, List<URI> seeds) {

	}

	/** Counts an attempt of {@code plan} sent to {@code node}. */
	void sent(Plan plan, URI node) {
		if (!plan.keyed()) {
			return;
		}
		Set<URI> replicas = plan.replicas();
		LongAdder counter = (replicas == null) ? this.withoutRing
				: replicas.contains(node) ? this.toReplica : this.toOtherNode;
		counter.increment();
	}

	/**
	 * A failure of a request: a 503 (a node that is not a member, or no longer) or a
	 * refused connection (a node gone) may mean the ring changed.
	 */
	void failed(QuorumKvException failure) {
		if (this.ring != null
				&& (failure instanceof ServiceUnavailableException || failure instanceof NodeUnavailableException)) {
			this.ring.suspectStale();
		}
	}

	RoutingStats stats() {
		RingView view = (this.ring != null) ? this.ring.held() : null;
		return new RoutingStats(this.toReplica.sum(), this.toOtherNode.sum(), this.withoutRing.sum(),
				(view != null) ? view.epoch() : 0);
	}

	@Override
	public void close() {
		if (this.ring != null) {
			this.ring.close();
		}
	}

	/**
	 * @param nodes the nodes in the order to try
	 * @param replicas the key's replicas under the ring, null without a ring
	 * @param keyed whether the request has a key (a scan has none)
	 */
	record Plan(List<URI> nodes, @Nullable Set<URI> replicas, boolean keyed) {

	}

}
