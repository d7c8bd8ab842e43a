package io.quorumkv.service.metadata;

import java.time.Duration;

/**
 * The timing of the metadata layer.
 *
 * @param electionMin the least time a follower waits for the leader before it stands for
 * election
 * @param electionMax the most it waits
 * @param requestTimeout how long one Raft call may take
 * @param proposalTimeout how long a proposal may take, retries included
 * @param snapshotEvery entries between two snapshots (the log is purged up to each)
 */
record MetadataTiming(Duration electionMin, Duration electionMax, Duration requestTimeout, Duration proposalTimeout,
		long snapshotEvery) {

	/** Suited to small machines: two shared cores, a JVM that may pause. */
	static final MetadataTiming DEFAULTS = new MetadataTiming(Duration.ofMillis(1500), Duration.ofMillis(3000),
			Duration.ofSeconds(3), Duration.ofSeconds(15), 100);

}
