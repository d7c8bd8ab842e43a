package io.quorumkv.service.paxos;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import io.quorumkv.service.peer.EntryFrame;
import io.quorumkv.service.storage.ChecksummedFile;
import io.quorumkv.storage.CorruptedStorageException;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.StorageException;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.scheduler.Schedulers;

/**
 * This node's Paxos acceptor state, one row per key, kept durably: an acceptor answers a
 * promise or an acceptance only once the state it answers from is on disk
 * ({@link #sync}), so that a restart never forgets what it promised or accepted.
 *
 * <p>
 * The table is one {@link ChecksummedFile} ({@link AcceptorTableFormat}) and its log
 * ({@link AcceptorLog}, {@code <file>.log}), both written by one writer thread: the rows
 * changed since the last write are appended to the log as one record and forced, and
 * changes made while it writes go together into the next record (group commit). Once the
 * log has grown past the table (and past {@code compactAt}), the table is written whole
 * instead, atomically (temporary file, force, rename, folder force), with the generation
 * it holds, and the log is emptied; a restart reads the table, then the log's records
 * after that generation (a stop between the two writes leaves records it skips). The
 * payload is at most {@code maxBytes}; {@code floor} is at least every ballot of a purged
 * row. A row is purged ({@link #purge}) once what it accepted is committed (or it
 * accepted nothing) and the grace period has passed; its ballots raise the floor, and a
 * key without a row counts as having promised the floor and committed at it, so purging
 * never lets an acceptor promise a ballot below one it promised, nor report a commit
 * older than one it recorded. A failed write is sticky (STYLE rule 19): every later
 * change fails until restart.
 */
final class AcceptorTable implements AutoCloseable {

	/** Below ChecksummedFile's largest payload. */
	static final long MAX_BYTES = 12L * 1024 * 1024;

	/** The log grows to at least this before it is written into the table. */
	static final long COMPACT_AT = 1024 * 1024;

	/** A removed row among the changes not yet written (compared by identity). */
	private static final Row REMOVED = new Row(Ballot.NONE, null, Ballot.NONE, Long.MIN_VALUE);

	/**
	 * A key's state: the highest ballot promised, the last proposal accepted, and the
	 * ballot of the most recent commit this node's storage holds (the table's floor when
	 * the row was made: see {@link Acceptor}).
	 */
	record Row(Ballot promised, @Nullable Proposal accepted, Ballot commit, long touchedMillis) {

		int size() {
			return 8 + this.promised.size() + this.commit.size() + 1 + ((this.accepted != null)
					? this.accepted.ballot().size() + EntryFrame.size(this.accepted.entry()) : 0);
		}

	}

	/** The table is full: no row for a new key, no room for a bigger proposal. */
	static final class FullException extends StorageException {

		FullException(String message) {
			super(message);
		}

	}

	private final @Nullable ChecksummedFile file;

	private @Nullable AcceptorLog log;

	private final long compactAt;

	private final int maxRows;

	private final long maxBytes;

	private final int maxKeySize;

	private final Map<ByteBuffer, Row> rows = new HashMap<>();

	/**
	 * The rows changed since the last write, in order; {@link #REMOVED} when purged. Kept
	 * only when there is a writer to empty it (not in memory).
	 */
	private final Map<ByteBuffer, Row> changed = new LinkedHashMap<>();

	private final List<Waiter> waiters = new ArrayList<>();

	private final @Nullable ExecutorService writer;

	private Ballot floor = Ballot.NONE;

	private long bytes;

	private long generation;

	private long durable;

	private boolean writing;

	private @Nullable Throwable failure;

	private record Waiter(long generation, MonoSink<Void> sink) {
	}

	private AcceptorTable(@Nullable ChecksummedFile file, int maxRows, long maxBytes, int maxKeySize, long compactAt) {
		if (maxRows < 1 || maxBytes < 1024 || maxBytes > MAX_BYTES) {
			throw new IllegalArgumentException(
					"an acceptor table needs 1 or more rows and 1 KiB to " + MAX_BYTES + " bytes");
		}
		this.file = file;
		this.compactAt = compactAt;
		this.maxRows = maxRows;
		this.maxBytes = maxBytes;
		this.maxKeySize = maxKeySize;
		this.writer = (file != null)
				? Executors.newSingleThreadExecutor(Thread.ofPlatform().name("paxos-table").daemon(true).factory())
				: null;
	}

	/**
	 * The table of {@code path}, as a previous run left it (empty when the file does not
	 * exist).
	 * @throws CorruptedStorageException when the file is damaged
	 */
	static AcceptorTable open(Path path, int maxRows, long maxBytes, int maxKeySize, int maxValueSize)
			throws IOException {
		return open(path, maxRows, maxBytes, maxKeySize, maxValueSize, COMPACT_AT);
	}

	/** As above, the log written into the table once past {@code compactAt} bytes. */
	static AcceptorTable open(Path path, int maxRows, long maxBytes, int maxKeySize, int maxValueSize, long compactAt)
			throws IOException {
		ChecksummedFile file = new ChecksummedFile(path, AcceptorTableFormat.MAGIC, AcceptorTableFormat.VERSION);
		AcceptorTable table = new AcceptorTable(file, maxRows, maxBytes, maxKeySize, compactAt);
		try {
			// A table of an earlier format is read as it was written; the next write
			// of the whole table replaces it with the current one.
			int version = AcceptorTableFormat.versionOf(path);
			ChecksummedFile reader = (version == AcceptorTableFormat.VERSION) ? file
					: new ChecksummedFile(path, AcceptorTableFormat.MAGIC, version);
			byte[] payload = reader.read();
			if (payload != null) {
				table.load(AcceptorTableFormat.decode(payload, version, path, maxRows, maxKeySize, maxValueSize));
			}
			long held = table.generation;
			table.log = AcceptorLog.open(path.resolveSibling(path.getFileName() + ".log"), maxKeySize, maxValueSize,
					(record) -> {
						if (record.generation() > held) {
							table.replay(record);
						}
					});
		}
		catch (IOException | RuntimeException ex) {
			table.close();
			throw ex;
		}
		return table;
	}

	/** A table that keeps nothing across restarts (unit tests of the protocol). */
	static AcceptorTable inMemory(int maxRows, long maxBytes, int maxKeySize) {
		return new AcceptorTable(null, maxRows, maxBytes, maxKeySize, COMPACT_AT);
	}

	private void load(AcceptorTableFormat.Table read) {
		this.floor = read.floor();
		this.rows.putAll(read.rows());
		this.bytes = read.bytes();
		this.generation = read.generation();
		this.durable = this.generation;
	}

	/** A log record after the table's generation: its changes made. */
	private void replay(AcceptorLog.Record record) {
		this.floor = Ballot.max(this.floor, record.floor());
		for (AcceptorLog.Change change : record.changes()) {
			Row old = (change.row() != null) ? this.rows.put(change.key(), change.row())
					: this.rows.remove(change.key());
			this.bytes += ((change.row() != null) ? AcceptorTableFormat.size(change.key().remaining(), change.row())
					: 0) - ((old != null) ? AcceptorTableFormat.size(change.key().remaining(), old) : 0);
		}
		this.generation = record.generation();
		this.durable = this.generation;
	}

	/** The key's row, or null when it has none (then it promised {@link #floor()}). */
	synchronized @Nullable Row row(byte[] key) {
		return this.rows.get(ByteBuffer.wrap(key));
	}

	/** What every key without a row counts as having promised and committed. */
	synchronized Ballot floor() {
		return this.floor;
	}

	/**
	 * Sets the key's row; durable once {@link #sync} of the generation it returns
	 * completes.
	 * @throws FullException when there is no room for it
	 * @throws StorageException when an earlier write failed
	 */
	synchronized long put(byte[] key, Row row) {
		failIfFailed();
		ByteBuffer id = ByteBuffer.wrap(key.clone());
		Row old = this.rows.get(id);
		long change = row.size() - ((old != null) ? old.size() : -(4L + key.length));
		if (old == null && this.rows.size() >= this.maxRows) {
			throw new FullException("the acceptor table holds its most rows (" + this.maxRows + ")");
		}
		if (this.bytes + change > this.maxBytes) {
			throw new FullException("the acceptor table holds its most bytes (" + this.maxBytes + ")");
		}
		this.rows.put(id, row);
		if (this.writer != null) {
			this.changed.put(id, row);
		}
		this.bytes += change;
		return ++this.generation;
	}

	/** The generation of the table as it is now (a read's answer waits for it). */
	synchronized long generation() {
		return this.generation;
	}

	/** The rows untouched since {@code beforeMillis}: candidates for {@link #purge}. */
	synchronized Map<ByteBuffer, Row> untouchedSince(long beforeMillis) {
		Map<ByteBuffer, Row> old = new HashMap<>();
		this.rows.forEach((key, row) -> {
			if (row.touchedMillis() < beforeMillis) {
				old.put(key, row);
			}
		});
		return old;
	}

	/**
	 * Drops the key's row if it is still {@code expected}, raising the floor to its
	 * ballots.
	 */
	synchronized boolean purge(ByteBuffer key, Row expected) {
		if (!this.rows.remove(key, expected)) {
			return false;
		}
		if (this.writer != null) {
			this.changed.put(key, REMOVED);
		}
		this.floor = Ballot.max(Ballot.max(this.floor, expected.promised()), expected.commit());
		if (expected.accepted() != null) {
			this.floor = Ballot.max(this.floor, expected.accepted().ballot());
		}
		this.bytes -= 4 + key.remaining() + expected.size();
		this.generation++;
		return true;
	}

	synchronized int size() {
		return this.rows.size();
	}

	/**
	 * Completes once the table as of {@code generation} (or later) is on disk (at once
	 * when it already is), on a parallel thread when it waited; fails when a write
	 * failed.
	 */
	Mono<Void> sync(long generation) {
		Mono<Void> synced = Mono.create((sink) -> {
			boolean start = false;
			synchronized (this) {
				if (this.failure != null) {
					sink.error(new StorageException("the acceptor table could not be written", this.failure));
					return;
				}
				if (this.writer == null || this.durable >= generation) {
					sink.success();
					return;
				}
				this.waiters.add(new Waiter(generation, sink));
				if (!this.writing) {
					this.writing = true;
					start = true;
				}
			}
			if (start) {
				this.writer.execute(this::writeLoop);
			}
		});
		// What follows a write runs off the writer thread, which goes on writing.
		return (this.writer == null) ? synced : synced.publishOn(Schedulers.parallel());
	}

	/**
	 * Writes the changes (or the whole table) until what is on disk is the latest; on the
	 * writer thread.
	 */
	private void writeLoop() {
		while (true) {
			byte[] payload;
			boolean whole;
			long written;
			synchronized (this) {
				if (this.durable >= this.generation || this.failure != null) {
					this.writing = false;
					return;
				}
				written = this.generation;
				byte[] record = AcceptorLog.encode(written, this.floor, changes());
				whole = this.log.size() + record.length > Math.max(this.compactAt, this.bytes);
				payload = whole ? AcceptorTableFormat.encode(written, this.floor, this.rows, this.bytes) : record;
				this.changed.clear();
			}
			List<Waiter> done = new ArrayList<>();
			Throwable failed = null;
			try {
				if (whole) {
					this.file.write(payload);
					this.log.clear();
				}
				else {
					this.log.append(payload);
				}
			}
			catch (IOException | RuntimeException ex) {
				failed = ex;
			}
			synchronized (this) {
				if (failed != null) {
					this.failure = failed;
					done.addAll(this.waiters);
					this.waiters.clear();
					this.writing = false;
				}
				else {
					long upTo = written;
					this.durable = upTo;
					this.waiters.removeIf((waiter) -> waiter.generation() <= upTo && done.add(waiter));
				}
			}
			for (Waiter waiter : done) {
				if (failed != null) {
					waiter.sink().error(new StorageException("the acceptor table could not be written", failed));
				}
				else {
					waiter.sink().success();
				}
			}
			if (failed != null) {
				return;
			}
		}
	}

	/** The changes not yet written, a removed row as null. */
	private Map<ByteBuffer, @Nullable Row> changes() {
		Map<ByteBuffer, @Nullable Row> changes = new LinkedHashMap<>();
		this.changed.forEach((key, row) -> changes.put(key, (row == REMOVED) ? null : row));
		return changes;
	}

	private void failIfFailed() {
		if (this.failure != null) {
			throw new StorageException("the acceptor table could not be written", this.failure);
		}
	}

	/** Stops the writer once it has written what it was asked to. */
	@Override
	public void close() {
		if (this.writer != null) {
			this.writer.close();
		}
		if (this.log != null) {
			try {
				this.log.close();
			}
			catch (IOException ex) {
				// Everything acknowledged was forced: nothing is lost.
			}
		}
	}

}
