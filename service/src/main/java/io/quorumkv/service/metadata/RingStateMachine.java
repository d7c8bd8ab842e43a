package io.quorumkv.service.metadata;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingJson;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.util.MD5FileUtil;
import org.jspecify.annotations.Nullable;

/**
 * The metadata log's state machine: the ring. Each entry ({@link RingCommand}) is applied
 * as a compare-and-set on the epoch, the same way on every node; the outcome (applied, or
 * refused with the epoch it lost to) is the proposer's answer. Every ring applied is
 * handed to the node ({@code adopt}), which keeps it in its ring file and serves under
 * it.
 *
 * <p>
 * A snapshot is the ring as JSON ({@code {"ring":…}}, or {@code {"ring":null}} before the
 * first), in a file named by the term and index it covers, with its MD5 beside it (Ratis'
 * {@link SimpleStateMachineStorage}); Ratis then purges the log up to it, and sends it to
 * a follower too far behind.
 */
final class RingStateMachine extends BaseStateMachine {

	private static final Log logger = LogFactory.getLog(RingStateMachine.class);

	private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();

	private final Function<Ring, CompletableFuture<?>> adopt;

	private final Runnable leaderChanged;

	private final Runnable newTerm;

	/** The highest term of an entry applied; -1 before the first. */
	private volatile long appliedTerm = -1;

	private volatile @Nullable Ring ring;

	/**
	 * @param adopt hands an applied ring to the node; the entry's answer waits for it
	 * @param leaderChanged told when the group's leader changes
	 * @param newTerm told when the first entry of a term above all before it is applied
	 * (every leader appends one as it takes office)
	 */
	RingStateMachine(Function<Ring, CompletableFuture<?>> adopt, Runnable leaderChanged, Runnable newTerm) {
		this.adopt = adopt;
		this.leaderChanged = leaderChanged;
		this.newTerm = newTerm;
	}

	/** The log's ring as this node has applied it; null before the first. */
	@Nullable Ring ring() {
		return this.ring;
	}

	@Override
	public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
		super.initialize(server, groupId, raftStorage);
		this.storage.init(raftStorage);
		reinitialize();
	}

	@Override
	public void reinitialize() throws IOException {
		SingleFileSnapshotInfo snapshot = this.storage.loadLatestSnapshot();
		if (snapshot == null) {
			return;
		}
		Path path = snapshot.getFile().getPath();
		if (snapshot.getFile().getFileDigest() != null) {
			MD5FileUtil.verifySavedMD5(path.toFile(), snapshot.getFile().getFileDigest());
		}
		Ring loaded = readSnapshot(Files.readAllBytes(path));
		synchronized (this) {
			this.ring = loaded;
			setLastAppliedTermIndex(snapshot.getTermIndex());
		}
		logger.info("Metadata snapshot " + snapshot.getTermIndex() + " loaded: "
				+ ((loaded != null) ? loaded.describe() : "no ring"));
		if (loaded != null) {
			this.adopt.apply(loaded);
		}
	}

	@Override
	public SimpleStateMachineStorage getStateMachineStorage() {
		return this.storage;
	}

	@Override
	public long takeSnapshot() throws IOException {
		Ring current;
		TermIndex applied;
		synchronized (this) {
			current = this.ring;
			applied = getLastAppliedTermIndex();
		}
		if (applied == null || applied.getIndex() < 0) {
			return -1;
		}
		File file = this.storage.getSnapshotFile(applied.getTerm(), applied.getIndex());
		Path tmp = file.toPath().resolveSibling(file.getName() + ".tmp");
		Files.write(tmp, snapshotBytes(current));
		Files.move(tmp, file.toPath(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
		FileInfo info = new FileInfo(file.toPath(), MD5FileUtil.computeAndSaveMd5ForFile(file));
		this.storage.updateLatestSnapshot(new SingleFileSnapshotInfo(info, applied));
		return applied.getIndex();
	}

	static byte[] snapshotBytes(@Nullable Ring ring) {
		return ("{\"ring\":" + ((ring != null) ? RingJson.write(ring) : "null") + "}").getBytes(StandardCharsets.UTF_8);
	}

	static @Nullable Ring readSnapshot(byte[] bytes) {
		tools.jackson.databind.JsonNode root = tools.jackson.databind.json.JsonMapper.shared().readTree(bytes);
		tools.jackson.databind.JsonNode ring = root.required("ring");
		return ring.isNull() ? null : RingJson.read(ring);
	}

	@Override
	public CompletableFuture<Message> query(Message request) {
		Ring current = this.ring;
		return CompletableFuture.completedFuture(Message.valueOf((current != null) ? RingJson.write(current) : "null"));
	}

	@Override
	public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
		LogEntryProto entry = trx.getLogEntry();
		RingCommand.Outcome outcome;
		Ring applied = null;
		synchronized (this) {
			try {
				RingCommand command = RingCommand.read(entry.getStateMachineLogEntry().getLogData().toByteArray());
				outcome = command.applyTo(this.ring);
				if (outcome.applied()) {
					this.ring = command.ring();
					applied = command.ring();
				}
			}
			catch (IllegalArgumentException ex) {
				Ring current = this.ring;
				outcome = new RingCommand.Outcome(false, (current != null) ? current.epoch() : 0,
						"not a metadata log entry: " + ex.getMessage());
			}
			updateLastAppliedTermIndex(TermIndex.valueOf(entry));
		}
		Message answer = Message
			.valueOf(org.apache.ratis.thirdparty.com.google.protobuf.ByteString.copyFrom(outcome.toBytes()));
		if (applied == null) {
			return CompletableFuture.completedFuture(answer);
		}
		logger.info("Metadata log entry " + TermIndex.valueOf(entry) + " applied: " + applied.describe());
		return this.adopt.apply(applied).handle((done, error) -> answer);
	}

	@Override
	public void notifyTermIndexUpdated(long term, long index) {
		super.notifyTermIndexUpdated(term, index);
		if (term > this.appliedTerm) {
			this.appliedTerm = term;
			this.newTerm.run();
		}
	}

	@Override
	public void notifyLeaderChanged(org.apache.ratis.protocol.RaftGroupMemberId groupMemberId,
			org.apache.ratis.protocol.RaftPeerId newLeaderId) {
		this.leaderChanged.run();
	}

}
