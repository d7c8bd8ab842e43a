package io.quorumkv.service.membership;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.NodeState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingChange;
import io.quorumkv.service.storage.ChecksummedFile;
import io.quorumkv.storage.Storage;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A newcomer's note that its storage was empty as it agreed to the change that adds it
 * ({@value #STARTED_EMPTY_FILE} in the data folder, naming the change): after that change
 * it holds only what the change sent it as an owner, so its clean-up has nothing to
 * remove and is skipped.
 */
final class NewcomerMark {

	private static final Log logger = LogFactory.getLog(NewcomerMark.class);

	/** Names the change whose newcomer this node was, with an empty storage. */
	static final String STARTED_EMPTY_FILE = "started-empty";

	/** {@code QKVE}. */
	private static final int STARTED_EMPTY_MAGIC = 0x514b5645;

	private final ClusterState state;

	private final Storage storage;

	private final Path folder;

	/**
	 * @param folder the data folder, where the note is kept
	 */
	NewcomerMark(ClusterState state, Storage storage, Path folder) {
		this.state = state;
		this.storage = storage;
		this.folder = folder;
	}

	/**
	 * Before this node, which has no ring, adopts its first one {@code next}: when that
	 * ring's change adds this node (a join, or a replacement at its URL) and its storage
	 * holds nothing, records so with the change's id in the data folder, durably, for
	 * {@link Cleanup#runInTurn} to skip the clean-up after that change. A node without a
	 * ring takes no writes, so what it holds when the change ends came with the change.
	 */
	Mono<Void> noteIfNewcomer(Ring next) {
		RingChange change = next.change();
		if (change == null || !isNewcomer(next, this.state.self())) {
			return Mono.empty();
		}
		return this.storage.scan(new byte[0], null).hasElements().flatMap((held) -> {
			if (held) {
				return Mono.empty();
			}
			return Mono.fromRunnable(() -> startedEmpty().writeText(change.id()))
				.subscribeOn(Schedulers.boundedElastic())
				.then(Mono.fromRunnable(() -> logger.info("Storage empty as this node is added by change " + change.id()
						+ ": it will skip the clean-up after that change")));
		});
	}

	/**
	 * Whether {@code ring}'s change brings {@code self} in: a join or a replacement whose
	 * joining node is this node (by id, or by URL for a replacement, which gives this
	 * node the dead node's id).
	 */
	static boolean isNewcomer(Ring ring, Node self) {
		RingChange change = ring.change();
		if (change == null || (change.kind() != RingChange.Kind.JOIN && change.kind() != RingChange.Kind.REPLACE)) {
			return false;
		}
		return ring.node(change.nodeId())
			.filter((node) -> node.state() == NodeState.JOINING)
			.filter((node) -> node.id().equals(self.id()) || node.url().equals(self.url()))
			.isPresent();
	}

	/**
	 * Whether this node recorded that it started {@code change} with an empty storage.
	 */
	boolean startedEmptyIn(String change) {
		try {
			return change.equals(startedEmpty().readText());
		}
		catch (IllegalStateException ex) {
			logger.warn("Cleanup: " + STARTED_EMPTY_FILE + " is unreadable (" + ex.getMessage() + "); cleaning up");
			return false;
		}
	}

	/** Deletes the note, once the clean-up it skipped is recorded. */
	void forget() {
		try {
			Files.deleteIfExists(this.folder.resolve(STARTED_EMPTY_FILE));
		}
		catch (IOException ex) {
			logger.warn("Cleanup: could not delete " + STARTED_EMPTY_FILE + " (" + ex.getMessage() + ")");
		}
	}

	private ChecksummedFile startedEmpty() {
		return ChecksummedFile.text(this.folder.resolve(STARTED_EMPTY_FILE), STARTED_EMPTY_MAGIC, "qkv-started-empty");
	}

}
