package io.quorumkv.service.metadata;

import java.time.Duration;

/**
 * The timing of the metadata layer, from {@link MetadataProperties}.
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

}
