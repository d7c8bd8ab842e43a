package io.quorumkv.service.membership;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.RingChange;
import io.quorumkv.service.cluster.RingLayout;
import io.quorumkv.service.membership.TransferProgress.Source;
import org.jspecify.annotations.Nullable;

/**
 * What {@code qkv status} shows of a node's part in the change under way: whether it
 * receives keys, each stream's keys, bytes and scanned bytes against its source's
 * estimate, the rates since the streams started and an estimate of the time left;
 * {@code done} once every stream is complete and durable.
 */
final class TransferStatus {

	private TransferStatus() {
	}

	/**
	 * @param current the streams' recorded progress, or null before the first
	 * @param estimates each source's estimate of the bytes it sends (-1 unknown)
	 * @param startedNanos when this node's streams of the change started, 0 before
	 * @param bytesAtStart the bytes already received then (a restarted target)
	 */
	static Map<String, Object> of(ClusterState state, @Nullable TransferProgress current, Map<String, Long> estimates,
			long startedNanos, long bytesAtStart) {
		Map<String, Object> status = new LinkedHashMap<>();
		RingLayout layout = state.layout();
		RingChange change = (layout != null) ? layout.ring().change() : null;
		status.put("node", state.self().id());
		status.put("epoch", state.epoch());
		if (change == null) {
			status.put("change", null);
			return status;
		}
		status.put("change", change.id());
		status.put("phase", change.phase().label());
		if (change.phase() != RingChange.Phase.STREAMING) {
			status.put("target", false);
			status.put("done", true);
			return status;
		}
		TransferPlan plan = new TransferPlan(layout);
		String self = state.self().id();
		boolean target = plan.targets().stream().anyMatch((node) -> node.id().equals(self));
		status.put("target", target);
		List<Map<String, Object>> sources = new ArrayList<>();
		boolean done = true;
		long keys = 0;
		long bytes = 0;
		long scanned = 0;
		long estimate = 0;
		boolean estimated = true;
		for (Node source : target ? plan.sources(self) : List.<Node>of()) {
			Source p = (current != null && current.change().equals(change.id()))
					? current.sources().getOrDefault(source.id(), Source.FRESH) : Source.FRESH;
			Long sourceEstimate = estimates.get(source.id());
			Map<String, Object> row = new LinkedHashMap<>();
			row.put("source", source.id());
			row.put("done", p.done());
			row.put("keys", p.keys());
			row.put("bytes", p.bytes());
			row.put("scannedBytes", p.scanned());
			row.put("estimatedBytes", (sourceEstimate != null) ? sourceEstimate : -1L);
			sources.add(row);
			done &= p.done();
			keys += p.keys();
			bytes += p.bytes();
			if (!p.done()) {
				scanned += p.scanned();
				if (sourceEstimate == null || sourceEstimate < 0) {
					estimated = false;
				}
				else {
					estimate += Math.max(sourceEstimate, p.scanned());
				}
			}
		}
		status.put("done", done);
		status.put("streams", sources.size());
		status.put("streamsDone", sources.stream().filter((row) -> (Boolean) row.get("done")).count());
		status.put("keys", keys);
		status.put("bytes", bytes);
		double seconds = (startedNanos > 0) ? (System.nanoTime() - startedNanos) / 1e9 : 0;
		double rate = (seconds > 0) ? (bytes - bytesAtStart) / seconds : 0;
		double scanRate = (seconds > 0 && scanned > 0) ? scanned / seconds : 0;
		status.put("bytesPerSecond", Math.round(rate));
		status.put("keysPerSecond", (seconds > 0) ? Math.round(keys / seconds) : 0);
		Long eta = null;
		if (done) {
			eta = 0L;
		}
		else if (estimated && scanRate > 0) {
			eta = Math.round((estimate - scanned) / scanRate);
		}
		status.put("etaSeconds", eta);
		status.put("sources", sources);
		return status;
	}

}
