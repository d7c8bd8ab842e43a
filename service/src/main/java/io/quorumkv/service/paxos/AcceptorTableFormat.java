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
 * {@link io.quorumkv.service.storage.ChecksummedFile} (magic {@code "PXS1"}, version 2: a
 * checksum over the whole file). Big-endian:
 *
 * <pre>
 * payload := u32 rows | ballot floor | row*
 * row     := u32 keyLength | key | i64 touchedMillis | ballot promised | ballot commit
 *            | u8 hasAccepted | [ballot | entry (EntryFrame)]
 * ballot  := i64 micros | u8 idLength | utf8 node id
 * </pre>
 *
 * Version 1 (before commits were recorded) is still read: its rows have no
 * {@code ballot commit}, and each is read with the floor as its commit, as a row made now
 * starts with it. The next write is version 2.
 *
 * Invariants, checked on every read: at most {@code maxRows} rows; keys of 1 to the
 * node's largest key, each once; every length within what is left; nothing after the last
 * row. Anything else is a {@link CorruptedStorageException} naming the file and the
 * offset, never a smaller table.
 */
final class AcceptorTableFormat {

	static final int MAGIC = 0x50585331;

	static final int VERSION = 2;

	/** The format before commits were recorded, still read. */
	static final int VERSION_1 = 1;

	/** The envelope's header before the payload (ChecksummedFile). */
	private static final int HEADER = 12;

	private AcceptorTableFormat() {
	}

	/** A table as read: its floor, its rows and their encoded bytes. */
	record Table(Ballot floor, Map<ByteBuffer, Row> rows, long bytes) {
	}

	/** Bytes a row takes in the payload. */
	static long size(byte[] key, Row row) {
		return 4 + key.length + row.size();
	}

	/**
	 * The format version of the table at {@code path}: the envelope's second field when
	 * it names version 1, else {@link #VERSION} (also for a missing or short file, which
	 * the envelope then reports).
	 */
	static int versionOf(Path path) throws IOException {
		if (!Files.isRegularFile(path)) {
			return VERSION;
		}
		try (InputStream in = Files.newInputStream(path)) {
			byte[] header = in.readNBytes(8);
			if (header.length == 8 && ByteBuffer.wrap(header).getInt() == MAGIC
					&& ByteBuffer.wrap(header, 4, 4).getInt() == VERSION_1) {
				return VERSION_1;
			}
		}
		return VERSION;
	}

	static byte[] encode(Ballot floor, Map<ByteBuffer, Row> rows, long bytes) {
		ByteBuffer out = ByteBuffer.allocate((int) (4 + floor.size() + bytes));
		out.putInt(rows.size());
		floor.put(out);
		rows.forEach((key, row) -> {
			out.putInt(key.remaining()).put(key.duplicate());
			out.putLong(row.touchedMillis());
			row.promised().put(out);
			row.commit().put(out);
			Proposal accepted = row.accepted();
			out.put((byte) ((accepted != null) ? 1 : 0));
			if (accepted != null) {
				accepted.ballot().put(out);
				EntryFrame.put(out, accepted.entry());
			}
		});
		return out.array();
	}

	/** The payload of {@code version} ({@link #VERSION} or {@link #VERSION_1}). */
	static Table decode(byte[] payload, int version, Path path, int maxRows, int maxKeySize, int maxValueSize) {
		ByteBuffer in = ByteBuffer.wrap(payload);
		Map<ByteBuffer, Row> rows = new HashMap<>();
		long bytes = 0;
		try {
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
				long touched = in.getLong();
				Ballot promised = Ballot.read(in);
				Ballot commit = (version == VERSION_1) ? floor : Ballot.read(in);
				Proposal accepted = null;
				if (in.get() != 0) {
					Ballot ballot = Ballot.read(in);
					accepted = new Proposal(ballot, EntryFrame.read(in, maxKeySize, maxValueSize));
				}
				Row row = new Row(promised, accepted, commit, touched);
				if (rows.put(ByteBuffer.wrap(key), row) != null) {
					throw damaged(path, in.position(), "row " + i + " repeats a key");
				}
				bytes += size(key, row);
			}
			if (in.hasRemaining()) {
				throw damaged(path, in.position(), in.remaining() + " bytes after the last row");
			}
			return new Table(floor, rows, bytes);
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
