package io.quorumkv.service.ops;

import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * The membership part of {@code scripts/qkv status}: the change under way and the
 * progress of every target's transfers (streams done, keys and bytes received, rate,
 * estimated time left), and this node's last clean-up.
 */
final class MembershipView {

	private MembershipView() {
	}

	@SuppressWarnings("unchecked")
	static String text(Map<String, @Nullable Object> status) {
		StringBuilder text = new StringBuilder();
		Map<String, Object> ring = (Map<String, Object>) status.get("ring");
		if (ring == null) {
			return "membership: this node has no ring yet (it waits to be joined)\n";
		}
		Map<String, Object> change = (Map<String, Object>) ring.get("change");
		text.append("membership: epoch ").append(ring.get("epoch"));
		if (change == null) {
			text.append(", no change under way");
		}
		else {
			text.append(", change ")
				.append(change.get("id"))
				.append(": ")
				.append(change.get("kind"))
				.append(" of ")
				.append(change.get("node"))
				.append(", ")
				.append(change.get("phase"))
				.append(", asked of ")
				.append(change.get("coordinator"));
		}
		Map<String, Object> cleanup = (Map<String, Object>) status.get("cleanup");
		if (cleanup != null) {
			Map<String, Object> last = (Map<String, Object>) cleanup.get("last");
			String done = (last == null) ? "not run" : (last.get("skipped") != null)
					? "last skipped at epoch " + last.get("epoch") + " (" + last.get("skipped") + ")"
					: "last removed " + last.get("removed") + " entries at epoch " + last.get("epoch")
							+ ((last.get("keptFromEpoch") != null) ? " (kept the rest: the ring moved on to epoch "
									+ last.get("keptFromEpoch") + " while it ran)" : "");
			text.append("; cleanup ")
				.append(Boolean.TRUE.equals(cleanup.get("running")) ? "running"
						: Boolean.TRUE.equals(cleanup.get("waiting")) ? "waiting for its turn (" + done + ")" : done);
		}
		text.append('\n');
		Map<String, Object> metadata = (Map<String, Object>) status.get("metadata");
		if (metadata != null) {
			text.append("metadata log: leader ")
				.append((metadata.get("leader") != null) ? metadata.get("leader") : "none known")
				.append(Boolean.TRUE.equals(metadata.get("leads")) ? " (this node)" : "")
				.append(", voters ")
				.append(metadata.get("voters"))
				.append(", listeners ")
				.append(metadata.get("listeners"))
				.append(", applied index ")
				.append(metadata.get("applied"));
			Map<String, Object> heard = (Map<String, Object>) metadata.get("lastHeardMs");
			if (heard != null && !heard.isEmpty()) {
				text.append("; last heard from (ms ago):");
				heard.forEach((peer, ms) -> text.append(' ').append(peer).append(' ').append(ms));
			}
			text.append('\n');
		}
		List<Map<String, Object>> transfers = (List<Map<String, Object>>) status.get("transfers");
		if (transfers != null && !transfers.isEmpty()) {
			TextTable table = new TextTable("TARGET", "STREAMS", "KEYS", "BYTES", "MB/S", "KEYS/S", "ETA-S", "STATE");
			for (Map<String, Object> target : transfers) {
				Object error = target.get("error");
				Number rate = (Number) target.get("bytesPerSecond");
				table.row(target.get("node"),
						(error != null) ? null : target.get("streamsDone") + "/" + target.get("streams"),
						target.get("keys"), target.get("bytes"),
						(rate != null) ? String.format(Locale.ROOT, "%.2f", rate.doubleValue() / 1e6) : null,
						target.get("keysPerSecond"), target.get("etaSeconds"), (error != null) ? "unreachable: " + error
								: Boolean.TRUE.equals(target.get("done")) ? "done" : "streaming");
			}
			text.append(table);
		}
		return text.toString();
	}

}
