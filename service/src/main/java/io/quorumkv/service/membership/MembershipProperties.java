package io.quorumkv.service.membership;

import java.time.Duration;

import io.quorumkv.service.config.Bounds;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * Membership changes (docs/membership.md): how keys stream to their new owners (the
 * changes themselves are entries of the metadata log).
 *
 * @param callTimeout how long a node waits for a peer's answer to a membership call (a
 * newcomer's identity, a target's transfers)
 * @param streamRate bytes per second a node receiving keys takes from all its sources
 * together
 * @param streamBatch entries of a transfer written to storage together, at most this many
 * bytes
 * @param streamSources how many of its sources a node receiving keys pulls from at once;
 * the others wait their turn. A source's first stream recompiles much of its serving code
 * (the JIT sees new types in the shared Reactor and Netty paths); one at a time, the
 * other replicas of a key answer while it does
 * @param checkpointInterval how often a node receiving keys makes them durable and
 * records how far each transfer has come (where it resumes after a restart)
 * @param pollInterval how often the leader of the metadata group checks the transfers of
 * the change under way (and the group's voters), and a member waiting for its turn to
 * clean up asks the member before it
 * @param autoCleanup whether a node removes the keys it no longer owns once a change has
 * finished (otherwise {@code scripts/qkv cleanup} does)
 * @param cleanupDelay how long after a change has finished a node waits before its
 * automatic clean-up, so that the last replica writes of the previous ring (those still
 * under way when it was replaced) have landed and are removed too; the members then clean
 * up one at a time, in the order of their ids, each once the one before it has finished
 * (or does not answer)
 * @param cleanupRate entries a clean-up looks at per second (kept or removed): at full
 * speed it reads and rewrites the node's whole store as fast as a core allows
 * @param autoJoin whether a node started without a ring asks the nodes of
 * {@code quorumkv.cluster.nodes} to join it, every {@code poll-interval} until one agrees
 * (a new pod of a StatefulSet that scales up); until it is a member its readiness is down
 */
@ConfigurationProperties("quorumkv.cluster.membership")
public record MembershipProperties(@DefaultValue("5s") Duration callTimeout, @DefaultValue("64MB") DataSize streamRate,
		@DefaultValue("1MB") DataSize streamBatch, @DefaultValue("1") int streamSources,
		@DefaultValue("1s") Duration checkpointInterval, @DefaultValue("500ms") Duration pollInterval,
		@DefaultValue("true") boolean autoCleanup, @DefaultValue("5s") Duration cleanupDelay,
		@DefaultValue("50000") long cleanupRate, @DefaultValue("false") boolean autoJoin) {

	public MembershipProperties {
		Bounds.positive(callTimeout, "quorumkv.cluster.membership.call-timeout");
		Bounds.positive(checkpointInterval, "quorumkv.cluster.membership.checkpoint-interval");
		Bounds.positive(pollInterval, "quorumkv.cluster.membership.poll-interval");
		Bounds.positive(cleanupDelay, "quorumkv.cluster.membership.cleanup-delay");
		if (streamRate.toBytes() < 1024) {
			throw new IllegalArgumentException("quorumkv.cluster.membership.stream-rate must be at least 1KB");
		}
		if (streamBatch.toBytes() < 1024 || streamBatch.toBytes() > 64 * 1024 * 1024) {
			throw new IllegalArgumentException("quorumkv.cluster.membership.stream-batch must be 1KB..64MB");
		}
		if (cleanupRate < 1) {
			throw new IllegalArgumentException("quorumkv.cluster.membership.cleanup-rate must be at least 1");
		}
		if (streamSources < 1 || streamSources > 64) {
			throw new IllegalArgumentException("quorumkv.cluster.membership.stream-sources must be 1..64");
		}
	}

}
