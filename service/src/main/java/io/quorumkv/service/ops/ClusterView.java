package io.quorumkv.service.ops;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.NodeState;
import io.quorumkv.service.cluster.Placement;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingLayout;
import io.quorumkv.service.cluster.RingNode;
import io.quorumkv.service.metadata.Liveness;
import io.quorumkv.service.replication.HintStore;
import io.quorumkv.service.peer.PeerClient;
import org.jspecify.annotations.Nullable;

/**
 * This node's view of the cluster: every node with the shared view of whether it is up
 * ({@link Liveness}), this node's breaker toward it, bulkhead, last call and latency, and
 * how the placement spreads a fixed sample of synthetic keys.
 */
final class ClusterView {

	/** Synthetic keys of the spread sample. */
	static final int SAMPLE_KEYS = 10_000;

	private final ClusterState cluster;

	private final PeerClient peers;

	private final HintStore hints;

	private final MeterRegistry meters;

	private final Liveness liveness;

	private volatile @Nullable Spread spread;

	ClusterView(ClusterState cluster, PeerClient peers, HintStore hints, MeterRegistry meters, Liveness liveness) {
		this.cluster = cluster;
		this.liveness = liveness;
		this.peers = peers;
		this.hints = hints;
		this.meters = meters;
	}

	/** One map per node, this one first, then the ring's other nodes in ring order. */
	List<Map<String, @Nullable Object>> nodes() {
		Map<String, Double> primaries = spread().getOrDefault(1, Map.of());
		List<Map<String, @Nullable Object>> rows = new ArrayList<>();
		rows.add(selfRow(primaries));
		for (RingNode peer : ringPeers()) {
			Map<String, @Nullable Object> row = peerRow(peer.node(), primaries);
			row.put("ringState", peer.state().label());
			rows.add(row);
		}
		return rows;
	}

	/** The ring's nodes but this one and the removed ones. */
	List<RingNode> ringPeers() {
		String self = this.cluster.self().id();
		return this.cluster.ring()
			.map((ring) -> ring.nodes()
				.stream()
				.filter((node) -> node.state() != NodeState.REMOVED && !node.id().equals(self))
				.toList())
			.orElse(List.of());
	}

	private Map<String, @Nullable Object> selfRow(Map<String, Double> primaries) {
		Node self = this.cluster.self();
		Map<String, @Nullable Object> row = new LinkedHashMap<>();
		row.put("url", self.base());
		row.put("id", self.id());
		row.put("self", true);
		row.put("state", "self");
		row.put("reachable", true);
		row.put("seen", null);
		row.put("breaker", null);
		row.put("lastOutcome", null);
		row.put("inFlight", null);
		row.put("maxInFlight", null);
		row.put("latency", null);
		row.put("pendingHints", 0L);
		row.put("primaryShare", primaries.get(self.id()));
		row.put("ringState",
				this.cluster.ring()
					.flatMap((ring) -> ring.node(self.id()))
					.map((node) -> node.state().label())
					.orElse("outside"));
		return row;
	}

	private Map<String, @Nullable Object> peerRow(Node peer, Map<String, Double> primaries) {
		CircuitBreaker.State breaker = this.peers.breakerState(peer);
		String last = this.peers.lastOutcome(peer);
		@Nullable Map<String, Object> seen = this.liveness.of(peer.id());
		Boolean reachable = reachable(breaker, last, seen != null && Boolean.TRUE.equals(seen.get("up")));
		int max = this.peers.maxInFlight();
		Map<String, @Nullable Object> row = new LinkedHashMap<>();
		row.put("url", peer.base());
		row.put("id", peer.id());
		row.put("self", false);
		row.put("state", (reachable == null) ? "unknown" : (reachable ? "up" : "down"));
		row.put("reachable", reachable);
		row.put("seen", seen);
		row.put("breaker", breaker.name());
		row.put("lastOutcome", last);
		row.put("inFlight", this.peers.inFlight(peer));
		row.put("maxInFlight", max);
		row.put("latency", latency(peer));
		row.put("pendingHints", this.hints.pending(peer));
		row.put("primaryShare", primaries.get(peer.id()));
		return row;
	}

	/**
	 * Down when the breaker refuses calls; else up when the shared view says so
	 * ({@link Liveness}: a call that failed before the peer came back says nothing now);
	 * else up or down as the last call went, unknown before any call.
	 */
	static @Nullable Boolean reachable(CircuitBreaker.State breaker, @Nullable String lastOutcome, boolean seenUp) {
		if (breaker == CircuitBreaker.State.OPEN || breaker == CircuitBreaker.State.FORCED_OPEN) {
			return false;
		}
		if (seenUp) {
			return true;
		}
		return (lastOutcome != null) ? "success".equals(lastOutcome) : null;
	}

	/**
	 * Calls, mean and approximate p50/p99 in milliseconds over every operation and
	 * outcome of {@code quorumkv.replica.requests} for the peer (percentiles are the
	 * upper bounds of the histogram buckets); null before the first call.
	 */
	@Nullable Map<String, Object> latency(Node peer) {
		long count = 0;
		double totalMs = 0;
		double maxMs = 0;
		Map<Double, Long> buckets = new java.util.TreeMap<>();
		for (Timer timer : this.meters.find("quorumkv.replica.requests").tag("peer", peer.id()).timers()) {
			HistogramSnapshot snapshot = timer.takeSnapshot();
			if (snapshot.count() == 0) {
				continue;
			}
			count += snapshot.count();
			totalMs += snapshot.total(TimeUnit.MILLISECONDS);
			maxMs = Math.max(maxMs, snapshot.max(TimeUnit.MILLISECONDS));
			long[] cumulative = cumulative(snapshot.histogramCounts(), snapshot.count());
			CountAtBucket[] counts = snapshot.histogramCounts();
			for (int i = 0; i < counts.length; i++) {
				buckets.merge(counts[i].bucket(TimeUnit.MILLISECONDS), cumulative[i], Long::sum);
			}
		}
		if (count == 0) {
			return null;
		}
		Map<String, Object> latency = new LinkedHashMap<>();
		latency.put("calls", count);
		latency.put("meanMs", round(totalMs / count));
		latency.put("p50Ms", round(percentile(buckets, count, 0.50, maxMs)));
		latency.put("p99Ms", round(percentile(buckets, count, 0.99, maxMs)));
		latency.put("maxMs", round(maxMs));
		return latency;
	}

	/**
	 * Bucket counts as cumulative counts, whichever way the registry reports them: counts
	 * that add up to the total are per bucket.
	 */
	static long[] cumulative(CountAtBucket[] counts, long total) {
		long[] result = new long[counts.length];
		double sum = Arrays.stream(counts).mapToDouble(CountAtBucket::count).sum();
		boolean perBucket = counts.length > 1 && (long) sum == total;
		long running = 0;
		for (int i = 0; i < counts.length; i++) {
			running = perBucket ? running + (long) counts[i].count() : (long) counts[i].count();
			result[i] = running;
		}
		return result;
	}

	private static double percentile(Map<Double, Long> cumulativeBuckets, long count, double quantile, double maxMs) {
		double rank = quantile * count;
		for (Map.Entry<Double, Long> bucket : cumulativeBuckets.entrySet()) {
			if (bucket.getValue() >= rank) {
				return Math.min(bucket.getKey(), maxMs);
			}
		}
		return maxMs;
	}

	private static double round(double value) {
		return Math.round(value * 1000) / 1000.0;
	}

	/** The placement's name and the spread of the sample, by replica count. */
	Map<String, Object> ring(String strategy) {
		Map<String, Object> ring = new LinkedHashMap<>();
		ring.put("strategy", strategy);
		ring.put("sampleKeys", SAMPLE_KEYS);
		Map<String, Object> shares = new LinkedHashMap<>();
		spread().forEach((from, byNode) -> shares.put(Integer.toString(from), byNode));
		ring.put("shareByFrom", shares);
		return ring;
	}

	/**
	 * For each replica count {@code from} (1, a majority of the replication factor, the
	 * replication factor), the fraction of the sample keys whose replica set (the new
	 * owners during a change) includes each node. Computed once per ring.
	 */
	Map<Integer, Map<String, Double>> spread() {
		RingLayout layout = this.cluster.layout();
		if (layout == null) {
			return Map.of();
		}
		Spread result = this.spread;
		if (result == null || result.epoch() != layout.epoch()) {
			result = new Spread(layout.epoch(), computeSpread(layout.ring()));
			this.spread = result;
		}
		return result.shares();
	}

	private record Spread(long epoch, Map<Integer, Map<String, Double>> shares) {
	}

	private static Map<Integer, Map<String, Double>> computeSpread(Ring ring) {
		int factor = ring.replicationFactor();
		Placement placement = ring.strategy().create(ring.newMembers(), ring.virtualNodes());
		Set<Integer> counts = new LinkedHashSet<>(List.of(1, factor / 2 + 1, factor));
		Map<Integer, Map<String, Double>> result = new LinkedHashMap<>();
		for (int from : counts) {
			Map<String, Long> hits = new LinkedHashMap<>();
			placement.nodes().forEach((node) -> hits.put(node.id(), 0L));
			for (int i = 0; i < SAMPLE_KEYS; i++) {
				byte[] key = ("sample-" + i).getBytes(StandardCharsets.UTF_8);
				for (Node node : placement.replicas(key, from)) {
					hits.merge(node.id(), 1L, Long::sum);
				}
			}
			Map<String, Double> shares = new LinkedHashMap<>();
			hits.forEach((node, n) -> shares.put(node, round((double) n / SAMPLE_KEYS)));
			result.put(from, shares);
		}
		return java.util.Collections.unmodifiableMap(result);
	}

}
