package io.quorumkv.storage.lsm;

import static io.quorumkv.storage.contract.Entries.keyNumber;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.io.FaultFileIo;
import io.quorumkv.storage.lsm.io.FaultFileIo.Op;

/**
 * What rounds of writes on a failing disk (one folder, reopened after each round) may
 * expect of a reopened store: every write acknowledged so far, except those the fsync
 * policy promised no one. With {@code INTERVAL} or {@code NEVER} a failed force of a WAL
 * segment loses the writes acknowledged since that segment's last force (the segment is
 * cut back to it: docs/storage-lsm.md, "Fsync policy trade-off"), whichever failure the
 * engine met first: so a round in which the fault layer failed any WAL force hands its
 * writes to the "may be lost" list, and those of them that survived must be intact and
 * are promised again. Keys are written once, each round's above its own base.
 */
final class AcknowledgedWrites {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private final Map<String, Entry> promised = new ConcurrentHashMap<>();

	private final List<Entry> maybe = new ArrayList<>();

	private int unpromised;

	/** {@code entry}'s upsert completed; thread-safe. */
	void acknowledged(Entry entry) {
		this.promised.put(new String(entry.key()), entry);
	}

	/**
	 * Ends the round whose keys are numbered from {@code base} on, once its store is
	 * closed (a force the syncer had begun may fail during the close).
	 */
	void roundEnded(FsyncPolicy policy, FaultFileIo io, int base) {
		if (policy != FsyncPolicy.ALWAYS && walForceFailed(io)) {
			this.promised.values().removeIf((e) -> keyNumber(e.key()) >= base && this.maybe.add(e));
		}
	}

	/**
	 * Whether the fault layer failed a force that may have been a WAL segment's: an
	 * {@code fsync} of a segment, or a folder force (a segment's first force includes
	 * one). Not an engine's failure, which is the first only: an in-flight periodic sync
	 * may fail after a failed write was the first.
	 */
	static boolean walForceFailed(FaultFileIo io) {
		return io.fired()
			.stream()
			.anyMatch((f) -> f.op() == Op.SYNC_DIRECTORY
					|| (f.op() == Op.SYNC && f.file().getFileName().toString().startsWith("wal-")));
	}

	/**
	 * Checks {@code reopened} holds every promised write, and of those that may be lost
	 * only intact ones (promised from now on); {@code as} names the round in a failure.
	 */
	void check(LsmStorage reopened, String as) {
		for (Entry e : this.promised.values()) {
			assertThat(reopened.get(e.key()).block(TIMEOUT)).as(as).isEqualTo(e);
		}
		for (Entry e : this.maybe) {
			Entry found = reopened.get(e.key()).block(TIMEOUT);
			if (found != null) {
				assertThat(found).as(as).isEqualTo(e);
				acknowledged(e);
			}
			else {
				this.unpromised++;
			}
		}
		this.maybe.clear();
	}

	/** The writes promised so far. */
	int promised() {
		return this.promised.size();
	}

	/** The writes lost that no policy had promised. */
	int unpromised() {
		return this.unpromised;
	}

}
