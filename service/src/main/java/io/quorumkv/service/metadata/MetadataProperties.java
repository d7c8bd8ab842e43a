package io.quorumkv.service.metadata;

import java.time.Duration;

import io.quorumkv.service.config.Bounds;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The timing of the metadata group (docs/membership.md): the Raft group of the seeds that
 * agrees on the ring. The defaults suit small machines (two shared cores, a JVM that may
 * pause for a second); shorter timeouts elect a new leader sooner after one dies, but a
 * pause longer than {@code election-min} then costs an election. Tests that do not test
 * the protocol's timing set them shorter.
 *
 * @param electionMin the least time a follower waits without news of the leader before it
 * stands for election
 * @param electionMax the most a follower waits so (each draws its wait in between); a
 * peer not heard from for this long is also taken as down in the nodes' shared view of
 * who is up
 * @param requestTimeout how long one Raft call to a peer may take
 * @param proposalTimeout how long a proposal (a step of a membership change) may take,
 * retries included
 * @param snapshotEvery log entries between two snapshots of the ring (the log is purged
 * up to each)
 */
@ConfigurationProperties("quorumkv.metadata")
public record MetadataProperties(@DefaultValue("1500ms") Duration electionMin,
		@DefaultValue("3000ms") Duration electionMax, @DefaultValue("3s") Duration requestTimeout,
		@DefaultValue("15s") Duration proposalTimeout, @DefaultValue("100") long snapshotEvery) {

	public MetadataProperties {
		Bounds.positive(electionMin, "quorumkv.metadata.election-min");
		Bounds.positive(requestTimeout, "quorumkv.metadata.request-timeout");
		Bounds.positive(proposalTimeout, "quorumkv.metadata.proposal-timeout");
		Bounds.atLeastOne(snapshotEvery, "quorumkv.metadata.snapshot-every");
		if (electionMax.compareTo(electionMin) <= 0) {
			throw new IllegalArgumentException(
					"quorumkv.metadata.election-max must be longer than quorumkv.metadata.election-min");
		}
		if (proposalTimeout.compareTo(requestTimeout) < 0) {
			throw new IllegalArgumentException(
					"quorumkv.metadata.proposal-timeout must be at least quorumkv.metadata.request-timeout");
		}
	}

	/** The timing the metadata layer runs with. */
	MetadataTiming timing() {
		return new MetadataTiming(this.electionMin, this.electionMax, this.requestTimeout, this.proposalTimeout,
				this.snapshotEvery);
	}

}
