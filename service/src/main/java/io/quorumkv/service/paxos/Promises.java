package io.quorumkv.service.paxos;

import java.util.List;
import java.util.Objects;

import io.quorumkv.service.paxos.Messages.Promise;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import org.jspecify.annotations.Nullable;

/**
 * What a majority's promises say together.
 *
 * @param newest the newest version stored among them ({@link Long#MIN_VALUE}: none)
 * @param current the newest entry that came whole (null: none)
 * @param accepted the accepted proposal of the highest ballot reported (null: none)
 * @param commit the highest commit ballot reported
 * @param everywhere whether every one of them stores the same entry
 */
record Promises(long newest, @Nullable Entry current, @Nullable Proposal accepted, Ballot commit, boolean everywhere) {

	static Promises of(List<Promise> promises) {
		long newest = Long.MIN_VALUE;
		Entry current = null;
		Proposal accepted = null;
		Ballot commit = Ballot.NONE;
		for (Promise promise : promises) {
			Entry stored = promise.current();
			if (stored != null) {
				newest = Math.max(newest, stored.timestamp());
				if (!promise.versionOnly()) {
					current = EntryOrder.max(current, stored);
				}
			}
			Proposal proposal = promise.accepted();
			if (proposal != null && (accepted == null || proposal.ballot().isAbove(accepted.ballot()))) {
				accepted = proposal;
			}
			commit = Ballot.max(commit, promise.commit());
		}
		boolean everywhere = promises.stream()
			.allMatch((p) -> !p.versionOnly() && Objects.equals(p.current(), promises.get(0).current()));
		return new Promises(newest, current, accepted, commit, everywhere);
	}

	/**
	 * The accepted proposal above every commit reported: chosen perhaps, and then stored
	 * at no majority yet (Cassandra's rule). One at or below a commit is that commit's
	 * value or one that can never be chosen: each acceptor records a commit only once it
	 * stores the committed entry, and promises only above it.
	 */
	@Nullable Proposal inProgress() {
		return (this.accepted != null && this.accepted.ballot().isAbove(this.commit)) ? this.accepted : null;
	}

}
