package io.quorumkv.service.paxos;

import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.zip.CRC32C;

import io.quorumkv.service.paxos.AcceptorTable.Row;
import io.quorumkv.service.peer.EntryFrame;
import io.quorumkv.service.storage.ChecksummedFile;
import io.quorumkv.storage.CorruptedStorageException;
import org.jspecify.annotations.Nullable;

/**
 * The acceptor table's log ({@link AcceptorTable}): the rows each group commit changed,
 * appended as one record and forced, so that a commit writes what changed, not the whole
 * table; the table is written whole (and the log emptied) only when the log has grown
 * past it. Big-endian:
 *
 * <pre>
 * record  := u32 magic "PXL1" | u32 length | u32 crc32c(payload) | payload
 * payload := i64 generation | ballot floor | u32 changes | change*
 * change  := u32 keyLength | key | u8 kind (0: row removed, 1: row) | [row body]
 * </pre>
 *
 * The row body and the ballot are the table's ({@link AcceptorTableFormat}); the
 * generation is the table's change count once the record's changes are made, rising from
 * record to record. A record cut short at the end of the file (a write a crash stopped:
 * never acknowledged, since a commit answers only once its record is forced) is dropped
 * and cut off; any other damage is a {@link CorruptedStorageException}, never a shorter
 * log. Written by the table's one writer thread only.
 */
final class AcceptorLog implements AutoCloseable {

	static final int MAGIC = 0x50584C31;

	private static final int HEADER = 12;

	private static final int MAX_RECORD = 16 * 1024 * 1024;

	/** A change of one key: its row, or null when the row was removed. */
	record Change(ByteBuffer key, @Nullable Row row) {
	}

	/** A record as read. */
	record Record(long generation, Ballot floor, List<Change> changes) {
	}

	private final FileChannel channel;

	private long size;

	private AcceptorLog(FileChannel channel, long size) {
		this.channel = channel;
		this.size = size;
	}

	/**
	 * The log at {@code path} (created when missing), each of its records handed to
	 * {@code replay} in order; a torn last record is cut off first.
	 * @throws CorruptedStorageException when a record before the last is damaged
	 */
	static AcceptorLog open(Path path, int maxKeySize, int maxValueSize, Consumer<Record> replay) throws IOException {
		byte[] bytes = Files.exists(path) ? Files.readAllBytes(path) : new byte[0];
		List<Record> records = new ArrayList<>();
		int end = read(path, bytes, maxKeySize, maxValueSize, records);
		FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ,
				StandardOpenOption.WRITE);
		try {
			if (end < bytes.length) {
				channel.truncate(end);
				channel.force(true);
			}
			ChecksummedFile.syncFolder(path.toAbsolutePath().getParent());
		}
		catch (IOException | RuntimeException ex) {
			channel.close();
			throw ex;
		}
		records.forEach(replay);
		return new AcceptorLog(channel, end);
	}

	/** Reads the records into {@code records}; the end of the last whole one. */
	private static int read(Path path, byte[] bytes, int maxKeySize, int maxValueSize, List<Record> records) {
		int position = 0;
		long generation = Long.MIN_VALUE;
		while (position < bytes.length) {
			int length = wholeRecordAt(bytes, position);
			if (length < 0) {
				if (anyRecordAfter(bytes, position)) {
					throw new CorruptedStorageException(path, position, "Paxos acceptor log",
							"a damaged record with records after it");
				}
				return position;
			}
			Record record = decode(path, ByteBuffer.wrap(bytes, position + HEADER, length), position, maxKeySize,
					maxValueSize);
			if (record.generation() <= generation) {
				throw new CorruptedStorageException(path, position, "Paxos acceptor log",
						"generation " + record.generation() + " after " + generation);
			}
			generation = record.generation();
			records.add(record);
			position += HEADER + length;
		}
		return position;
	}

	/** The payload length of a whole record at {@code position}, or -1. */
	private static int wholeRecordAt(byte[] bytes, int position) {
		if (bytes.length - position < HEADER) {
			return -1;
		}
		ByteBuffer header = ByteBuffer.wrap(bytes, position, HEADER);
		int magic = header.getInt();
		int length = header.getInt();
		int crc = header.getInt();
		if (magic != MAGIC || length < 0 || length > MAX_RECORD || length > bytes.length - position - HEADER) {
			return -1;
		}
		CRC32C check = new CRC32C();
		check.update(bytes, position + HEADER, length);
		return ((int) check.getValue() == crc) ? length : -1;
	}

	/** Whether a whole record starts anywhere after {@code position}. */
	private static boolean anyRecordAfter(byte[] bytes, int position) {
		for (int at = position + 1; at <= bytes.length - HEADER; at++) {
			if (wholeRecordAt(bytes, at) >= 0) {
				return true;
			}
		}
		return false;
	}

	private static Record decode(Path path, ByteBuffer in, int position, int maxKeySize, int maxValueSize) {
		try {
			long generation = in.getLong();
			Ballot floor = Ballot.read(in);
			int count = in.getInt();
			if (count < 0) {
				throw damaged(path, position, count + " changes");
			}
			List<Change> changes = new ArrayList<>();
			for (int i = 0; i < count; i++) {
				int length = in.getInt();
				if (length < 1 || length > maxKeySize || length > in.remaining()) {
					throw damaged(path, position, "change " + i + " has a key of " + length + " bytes");
				}
				byte[] key = new byte[length];
				in.get(key);
				byte kind = in.get();
				if (kind != 0 && kind != 1) {
					throw damaged(path, position, "change " + i + " is of kind " + kind);
				}
				Row row = (kind == 1)
						? AcceptorTableFormat.readBody(in, AcceptorTableFormat.VERSION, floor, maxKeySize, maxValueSize)
						: null;
				changes.add(new Change(ByteBuffer.wrap(key), row));
			}
			if (in.hasRemaining()) {
				throw damaged(path, position, in.remaining() + " bytes after the last change");
			}
			return new Record(generation, floor, changes);
		}
		catch (BufferUnderflowException | EntryFrame.MalformedFrameException ex) {
			throw damaged(path, position, "ends inside a change: " + ex.getMessage());
		}
	}

	private static CorruptedStorageException damaged(Path path, long offset, String detail) {
		return new CorruptedStorageException(path, offset, "Paxos acceptor log", "the record here " + detail);
	}

	/**
	 * A record of {@code changes} (a null row: removed), the table at {@code generation}
	 * with {@code floor} once they are made.
	 */
	static byte[] encode(long generation, Ballot floor, Map<ByteBuffer, @Nullable Row> changes) {
		int size = HEADER + 8 + floor.size() + 4;
		for (Map.Entry<ByteBuffer, @Nullable Row> change : changes.entrySet()) {
			Row row = change.getValue();
			size += 4 + change.getKey().remaining() + 1 + ((row != null) ? row.size() : 0);
		}
		ByteBuffer out = ByteBuffer.allocate(size);
		out.position(HEADER);
		out.putLong(generation);
		floor.put(out);
		out.putInt(changes.size());
		changes.forEach((key, row) -> {
			out.putInt(key.remaining()).put(key.duplicate());
			out.put((byte) ((row != null) ? 1 : 0));
			if (row != null) {
				AcceptorTableFormat.putBody(out, row);
			}
		});
		CRC32C crc = new CRC32C();
		crc.update(out.array(), HEADER, size - HEADER);
		out.putInt(0, MAGIC).putInt(4, size - HEADER).putInt(8, (int) crc.getValue());
		return out.array();
	}

	/** Bytes in the log. */
	long size() {
		return this.size;
	}

	/** Appends {@code record} ({@link #encode}) and forces it to the disk. */
	void append(byte[] record) throws IOException {
		ByteBuffer out = ByteBuffer.wrap(record);
		long at = this.size;
		while (out.hasRemaining()) {
			at += this.channel.write(out, at);
		}
		this.channel.force(false);
		this.size = at;
	}

	/** Empties the log, durably: the table now holds every record. */
	void clear() throws IOException {
		this.channel.truncate(0);
		this.channel.force(true);
		this.size = 0;
	}

	@Override
	public void close() throws IOException {
		this.channel.close();
	}

}
