package io.quorumkv.service.paxos;

import java.io.IOException;
import java.io.InputStream;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import io.quorumkv.service.paxos.AcceptorTable.Row;
import io.quorumkv.service.peer.EntryFrame;
import io.quorumkv.storage.CorruptedStorageException;

/**
 * The format of the acceptor table's payload, inside a
 * {@link io.quorumkv.service.storage.ChecksummedFile} (magic {@code "PXS1"}, version 3: a
 * checksum over the whole file). Big-endian:
 *
 * <pre>
 * payload := i64 generation | u32 rows | ballot floor | row*
 * row     := u32 keyLength | key | body
 * body    := i64 touchedMillis | ballot promised | ballot commit
 *            | u8 hasAccepted | [ballot | entry (EntryFrame)]
 * ballot  := i64 micros | u8 idLength | utf8 node id
 * </pre>
 *
 * The generation is the table's change count that the file holds: the records of its log
 * ({@link AcceptorLog}) up to it are already in the table. Version 2 (before the log) has
 * no generation and is read as generation 0. Version 1 (before commits were recorded)
 * neither, and its rows have no {@code ballot commit}: each is read with the floor as its
 * commit, as a row made now starts with it. The next write is version 3.
 *
 * Invariants, checked on every read: at most {@code maxRows} rows; keys of 1 to the
 * node's largest key, each once; every length within what is left; nothing after the last
 * row. Anything else is a {@link CorruptedStorageException} naming the file and the
 * offset, never a smaller table.
 */
final class AcceptorTableFormat {

	static final int MAGIC = 0x50585331;

	static final int VERSION = 3;

	/** The format before the log, still read. */
	static final int VERSION_2 = 2;

	/** The format before commits were recorded, still read. */
	static final int VERSION_1 = 1;

	/** The envelope's header before the payload (ChecksummedFile). */
	private static final int HEADER = 12;

	private AcceptorTableFormat() {
	}

	/** A table as read: its generation, its floor, its rows and their encoded bytes. */
	record Table(long generation, Ballot floor, Map<ByteBuffer, Row> rows, long bytes) {
	}

	/** Bytes a row takes in the payload. */
	static long size(byte[] key, Row row) {
		return size(key.length, row);
	}

	/** Bytes a row of a key of {@code keyLength} takes in the payload. */
	static long size(int keyLength, Row row) {
		return 4 + keyLength + row.size();
	}

	/**
	 * The format version of the table at {@code path}: the envelope's second field when
	 * it names version 1 or 2, else {@link #VERSION} (also for a missing or short file,
	 * which the envelope then reports).
	 */
	static int versionOf(Path path) throws IOException {
		if (!Files.isRegularFile(path)) {
			return VERSION;
		}
		try (InputStream in = Files.newInputStream(path)) {
			byte[] header = in.readNBytes(8);
			if (header.length == 8 && ByteBuffer.wrap(header).getInt() == MAGIC) {
				int version = ByteBuffer.wrap(header, 4, 4).getInt();
				if (version == VERSION_1 || version == VERSION_2) {
					return version;
				}
			}
		}
		return VERSION;
	}

	static byte[] encode(long generation, Ballot floor, Map<ByteBuffer, Row> rows, long bytes) {
		ByteBuffer out = ByteBuffer.allocate((int) (8 + 4 + floor.size() + bytes));
		out.putLong(generation);
		out.putInt(rows.size());
		floor.put(out);
		rows.forEach((key, row) -> {
			out.putInt(key.remaining()).put(key.duplicate());
			putBody(out, row);
		});
		return out.array();
	}

	/** A row's body: all of it but its key. */
	static void putBody(ByteBuffer out, Row row) {
		out.putLong(row.touchedMillis());
		row.promised().put(out);
		row.commit().put(out);
		Proposal accepted = row.accepted();
		out.put((byte) ((accepted != null) ? 1 : 0));
		if (accepted != null) {
			accepted.ballot().put(out);
			EntryFrame.put(out, accepted.entry());
		}
	}

	/**
	 * A row's body of {@code version}, whose commit is {@code floor} in version 1.
	 * @throws BufferUnderflowException when it ends early
	 * @throws EntryFrame.MalformedFrameException when its entry is malformed
	 */
	static Row readBody(ByteBuffer in, int version, Ballot floor, int maxKeySize, int maxValueSize) {
		long touched = in.getLong();
		Ballot promised = Ballot.read(in);
		Ballot commit = (version == VERSION_1) ? floor : Ballot.read(in);
		Proposal accepted = null;
		if (in.get() != 0) {
			Ballot ballot = Ballot.read(in);
			accepted = new Proposal(ballot, EntryFrame.read(in, maxKeySize, maxValueSize));
		}
		return new Row(promised, accepted, commit, touched);
	}

	/** The payload of {@code version} ({@link #VERSION}, 2 or 1). */
	static Table decode(byte[] payload, int version, Path path, int maxRows, int maxKeySize, int maxValueSize) {
		ByteBuffer in = ByteBuffer.wrap(payload);
		Map<ByteBuffer, Row> rows = new HashMap<>();
		long bytes = 0;
		try {
			long generation = (version == VERSION) ? in.getLong() : 0;
			if (generation < 0) {
				throw damaged(path, 0, "generation " + generation);
			}
			int count = in.getInt();
			if (count < 0 || count > maxRows) {
				throw damaged(path, 0, count + " rows");
			}
			Ballot floor = Ballot.read(in);
			for (int i = 0; i < count; i++) {
				int length = in.getInt();
				if (length < 1 || length > maxKeySize || length > in.remaining()) {
					throw damaged(path, in.position(), "row " + i + " has a key of " + length + " bytes");
				}
				byte[] key = new byte[length];
				in.get(key);
				Row row = readBody(in, version, floor, maxKeySize, maxValueSize);
				if (rows.put(ByteBuffer.wrap(key), row) != null) {
					throw damaged(path, in.position(), "row " + i + " repeats a key");
				}
				bytes += size(key, row);
			}
			if (in.hasRemaining()) {
				throw damaged(path, in.position(), in.remaining() + " bytes after the last row");
			}
			return new Table(generation, floor, rows, bytes);
		}
		catch (BufferUnderflowException | EntryFrame.MalformedFrameException ex) {
			throw damaged(path, in.position(), "ends inside a row: " + ex.getMessage());
		}
	}

	/** Damage at {@code offset} of the payload. */
	private static CorruptedStorageException damaged(Path path, long offset, String detail) {
		return new CorruptedStorageException(path, HEADER + offset, "Paxos acceptor table", detail);
	}

}
