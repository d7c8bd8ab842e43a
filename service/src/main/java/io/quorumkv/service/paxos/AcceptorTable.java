package io.quorumkv.service.paxos;

import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.ReentrantLock;

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
 * The whole table is one {@link ChecksummedFile} ({@code magic "PXS1"}, version 1),
 * rewritten atomically (temporary file, force, rename, folder force) by one writer
 * thread; changes made while it writes are written together by the next write (group
 * commit). Payload, big-endian:
 *
 * <pre>
 * payload := u32 rows | ballot floor | row*
 * row     := u32 keyLength | key | i64 touchedMillis | ballot promised
 *            | u8 hasAccepted | [ballot | entry (EntryFrame)]
 * ballot  := i64 micros | u8 idLength | utf8 node id
 * </pre>
 *
 * Invariants: keys are unique and at most the node's largest key; the payload is at most
 * {@code maxBytes}; {@code floor} is at least every ballot of a purged row. A row is
 * purged ({@link #purge}) once what it accepted is stored (or it accepted nothing) and
 * the grace period has passed; its ballots raise the floor, and a key without a row
 * counts as having promised the floor, so purging never lets an acceptor promise a ballot
 * below one it promised. A failed write is sticky (STYLE rule 19): every later change
 * fails until restart.
 */
final class AcceptorTable implements AutoCloseable {

	static final int MAGIC = 0x50585331;

	static final int VERSION = 1;

	/** Below ChecksummedFile's largest payload. */
	static final long MAX_BYTES = 12L * 1024 * 1024;

	/** A key's state: the highest ballot promised and the last proposal accepted. */
	record Row(Ballot promised, @Nullable Proposal accepted, long touchedMillis) {

		int size() {
			return 8 + this.promised.size() + 1 + ((this.accepted != null)
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

	private final ReentrantLock lock = new ReentrantLock();

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
		ChecksummedFile file = new ChecksummedFile(path, MAGIC, VERSION);
		AcceptorTable table = new AcceptorTable(file, maxRows, maxBytes, maxKeySize);
		byte[] payload = file.read();
		if (payload != null) {
			table.load(payload, path, maxValueSize);
		}
		return table;
	}

	/** A table that keeps nothing across restarts (unit tests of the protocol). */
	static AcceptorTable inMemory(int maxRows, long maxBytes, int maxKeySize) {
		return new AcceptorTable(null, maxRows, maxBytes, maxKeySize);
	}

	private void load(byte[] payload, Path path, int maxValueSize) {
		ByteBuffer in = ByteBuffer.wrap(payload);
		try {
			int count = in.getInt();
			if (count < 0 || count > this.maxRows) {
				throw damaged(path, 0, count + " rows");
			}
			this.floor = Ballot.read(in);
			for (int i = 0; i < count; i++) {
				int length = in.getInt();
				if (length < 1 || length > this.maxKeySize || length > in.remaining()) {
					throw damaged(path, in.position(), "row " + i + " has a key of " + length + " bytes");
				}
				byte[] key = new byte[length];
				in.get(key);
				long touched = in.getLong();
				Ballot promised = Ballot.read(in);
				Proposal accepted = null;
				if (in.get() != 0) {
					Ballot ballot = Ballot.read(in);
					accepted = new Proposal(ballot, EntryFrame.read(in, this.maxKeySize, maxValueSize));
				}
				Row row = new Row(promised, accepted, touched);
				if (this.rows.put(ByteBuffer.wrap(key), row) != null) {
					throw damaged(path, in.position(), "row " + i + " repeats a key");
				}
				this.bytes += 4 + key.length + row.size();
			}
			if (in.hasRemaining()) {
				throw damaged(path, in.position(), in.remaining() + " bytes after the last row");
			}
		}
		catch (BufferUnderflowException | EntryFrame.MalformedFrameException ex) {
			throw damaged(path, in.position(), "ends inside a row: " + ex.getMessage());
		}
	}

	/** Damage at {@code offset} of the payload (after the file's 12-byte header). */
	private static CorruptedStorageException damaged(Path path, long offset, String detail) {
		return new CorruptedStorageException(path, 12 + offset, "Paxos acceptor table", detail);
	}

	/** The key's row, or null when it has none (then it promised {@link #floor()}). */
	@Nullable Row row(byte[] key) {
		this.lock.lock();
		try {
			return this.rows.get(ByteBuffer.wrap(key));
		}
		finally {
			this.lock.unlock();
		}
	}

	/** What every key without a row counts as having promised. */
	Ballot floor() {
		this.lock.lock();
		try {
			return this.floor;
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Sets the key's row; durable once {@link #sync} of the generation it returns
	 * completes.
	 * @throws FullException when there is no room for it
	 * @throws StorageException when an earlier write failed
	 */
	long put(byte[] key, Row row) {
		this.lock.lock();
		try {
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
		finally {
			this.lock.unlock();
		}
	}

	/** The generation of the table as it is now (a read's answer waits for it). */
	long generation() {
		this.lock.lock();
		try {
			return this.generation;
		}
		finally {
			this.lock.unlock();
		}
	}

	/** The rows untouched since {@code beforeMillis}: candidates for {@link #purge}. */
	Map<ByteBuffer, Row> untouchedSince(long beforeMillis) {
		this.lock.lock();
		try {
			Map<ByteBuffer, Row> old = new HashMap<>();
			this.rows.forEach((key, row) -> {
				if (row.touchedMillis() < beforeMillis) {
					old.put(key, row);
				}
			});
			return old;
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Drops the key's row if it is still {@code expected}, raising the floor to its
	 * ballots.
	 */
	boolean purge(ByteBuffer key, Row expected) {
		this.lock.lock();
		try {
			if (!this.rows.remove(key, expected)) {
				return false;
			}
			this.floor = Ballot.max(this.floor, expected.promised());
			if (expected.accepted() != null) {
				this.floor = Ballot.max(this.floor, expected.accepted().ballot());
			}
			this.bytes -= 4 + key.remaining() + expected.size();
			this.generation++;
			return true;
		}
		finally {
			this.lock.unlock();
		}
	}

	int size() {
		this.lock.lock();
		try {
			return this.rows.size();
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Completes once the table as of {@code generation} (or later) is on disk (at once
	 * when it already is), on a parallel thread when it waited; fails when a write
	 * failed.
	 */
	Mono<Void> sync(long generation) {
		Mono<Void> synced = Mono.create((sink) -> {
			boolean start = false;
			this.lock.lock();
			try {
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
			finally {
				this.lock.unlock();
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
			this.lock.lock();
			try {
				if (this.durable >= this.generation || this.failure != null) {
					this.writing = false;
					return;
				}
				payload = encode();
				written = this.generation;
			}
			finally {
				this.lock.unlock();
			}
			List<Waiter> done = new ArrayList<>();
			Throwable failed = null;
			try {
				this.file.write(payload);
			}
			catch (IOException | RuntimeException ex) {
				failed = ex;
			}
			this.lock.lock();
			try {
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
			finally {
				this.lock.unlock();
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
		ByteBuffer out = ByteBuffer.allocate((int) (4 + this.floor.size() + this.bytes));
		out.putInt(this.rows.size());
		this.floor.put(out);
		this.rows.forEach((key, row) -> {
			out.putInt(key.remaining()).put(key.duplicate());
			out.putLong(row.touchedMillis());
			row.promised().put(out);
			Proposal accepted = row.accepted();
			out.put((byte) ((accepted != null) ? 1 : 0));
			if (accepted != null) {
				accepted.ballot().put(out);
				EntryFrame.put(out, accepted.entry());
			}
		});
		return out.array();
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
