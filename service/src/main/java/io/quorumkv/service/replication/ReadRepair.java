package io.quorumkv.service.replication;

import java.util.Optional;
import java.util.concurrent.Semaphore;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.RingLayout.Targets;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;

/**
 * Read repair: after every replica of a read answered, the winning entry is pushed, as
 * the replicas hold it (expiry included), to those that lag. At most a bounded number of
 * pushes are in flight; past it a repair is skipped (counted), left to anti-entropy.
 */
final class ReadRepair {

	private final ReplicaDirectory replicas;

	private final Semaphore inFlight;

	private final Counter pushed;

	private final Counter failed;

	private final Counter skipped;

	ReadRepair(ReplicaDirectory replicas, int maxConcurrent, MeterRegistry meters) {
		this.replicas = replicas;
		this.inFlight = new Semaphore(maxConcurrent);
		this.pushed = Counter.builder("quorumkv.repairs")
			.tag("outcome", "pushed")
			.description("Read repairs")
			.register(meters);
		this.failed = Counter.builder("quorumkv.repairs").tag("outcome", "failed").register(meters);
		this.skipped = Counter.builder("quorumkv.repairs").tag("outcome", "skipped").register(meters);
	}

	/** Pushes the round's winner to the targets whose answers it supersedes. */
	void repair(Targets targets, QuorumRound round) {
		Entry winner = round.winner();
		if (winner == null) {
			return;
		}
		for (int i = 0; i < round.size(); i++) {
			Optional<Entry> answer = round.answer(i);
			if (answer == null || (answer.isPresent() && !EntryOrder.supersedes(winner, answer.get()))) {
				continue;
			}
			if (!this.inFlight.tryAcquire()) {
				this.skipped.increment();
				continue;
			}
			this.replicas.of(targets.nodes().get(i)).repair(winner, () -> {
				this.inFlight.release();
				this.pushed.increment();
			}, (error) -> {
				this.inFlight.release();
				this.failed.increment();
			});
		}
	}

}
