package io.quorumkv.service.paxos;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
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
 * The whole table is one {@link ChecksummedFile} ({@link AcceptorTableFormat}), rewritten
 * atomically (temporary file, force, rename, folder force) by one writer thread; changes
 * made while it writes are written together by the next write (group commit). The payload
 * is at most {@code maxBytes}; {@code floor} is at least every ballot of a purged row. A
 * row is purged ({@link #purge}) once what it accepted is committed (or it accepted
 * nothing) and the grace period has passed; its ballots raise the floor, and a key
 * without a row counts as having promised the floor and committed at it, so purging never
 * lets an acceptor promise a ballot below one it promised, nor report a commit older than
 * one it recorded. A failed write is sticky (STYLE rule 19): every later change fails
 * until restart.
 */
final class AcceptorTable implements AutoCloseable {

	/** Below ChecksummedFile's largest payload. */
	static final long MAX_BYTES = 12L * 1024 * 1024;

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

	private final int maxRows;

	private final long maxBytes;

	private final int maxKeySize;

	private final Map<ByteBuffer, Row> rows = new HashMap<>();

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

	private AcceptorTable(@Nullable ChecksummedFile file, int maxRows, long maxBytes, int maxKeySize) {
		if (maxRows < 1 || maxBytes < 1024 || maxBytes > MAX_BYTES) {
			throw new IllegalArgumentException(
					"an acceptor table needs 1 or more rows and 1 KiB to " + MAX_BYTES + " bytes");
		}
		this.file = file;
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
		ChecksummedFile file = new ChecksummedFile(path, AcceptorTableFormat.MAGIC, AcceptorTableFormat.VERSION);
		AcceptorTable table = new AcceptorTable(file, maxRows, maxBytes, maxKeySize);
		// A table of an earlier format is read as it was written; the next write
		// replaces it with the current one.
		int version = AcceptorTableFormat.versionOf(path);
		ChecksummedFile reader = (version == AcceptorTableFormat.VERSION) ? file
				: new ChecksummedFile(path, AcceptorTableFormat.MAGIC, version);
		byte[] payload = reader.read();
		if (payload != null) {
			table.load(payload, version, path, maxValueSize);
		}
		return table;
	}

	/** A table that keeps nothing across restarts (unit tests of the protocol). */
	static AcceptorTable inMemory(int maxRows, long maxBytes, int maxKeySize) {
		return new AcceptorTable(null, maxRows, maxBytes, maxKeySize);
	}

	private void load(byte[] payload, int version, Path path, int maxValueSize) {
		AcceptorTableFormat.Table read = AcceptorTableFormat.decode(payload, version, path, this.maxRows,
				this.maxKeySize, maxValueSize);
		this.floor = read.floor();
		this.rows.putAll(read.rows());
		this.bytes = read.bytes();
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

	/** Writes the table until what is on disk is the latest; on the writer thread. */
	private void writeLoop() {
		while (true) {
			byte[] payload;
			long written;
			synchronized (this) {
				if (this.durable >= this.generation || this.failure != null) {
					this.writing = false;
					return;
				}
				payload = encode();
				written = this.generation;
			}
			List<Waiter> done = new ArrayList<>();
			Throwable failed = null;
			try {
				this.file.write(payload);
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

	private byte[] encode() {
		return AcceptorTableFormat.encode(this.floor, this.rows, this.bytes);
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
	}

}
