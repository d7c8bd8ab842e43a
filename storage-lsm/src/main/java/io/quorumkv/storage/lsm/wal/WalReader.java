package io.quorumkv.storage.lsm.wal;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.function.Consumer;

import io.quorumkv.storage.CorruptedStorageException;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.io.FileIo;

/**
 * Replays a WAL segment. Only the last record can be torn (the process or the machine
 * died while appending it): an incomplete header, an incomplete payload, a last record
 * whose checksum fails, or a zero-filled tail is dropped and the file truncated. A torn
 * record may itself be followed by zeros (after a power loss a file system can keep a
 * file's new length but not all of its data): a bad record with only zeros after it is
 * torn too. A bad record followed by any other data is damage and throws
 * {@link CorruptedStorageException} naming file and offset.
 */
public final class WalReader {

	private static final System.Logger LOG = System.getLogger(WalReader.class.getName());

	private WalReader() {
	}

	/** What a replay found. */
	public record Replay(long records, long validLength, boolean tornTail) {
	}

	/** Replays {@code file} into {@code sink}, truncating a torn tail. */
	public static Replay replay(FileIo io, Path file, Consumer<Entry> sink) throws IOException {
		byte[] bytes = io.readAll(file);
		ByteBuffer buffer = ByteBuffer.wrap(bytes).order(ByteOrder.BIG_ENDIAN);
		int length = bytes.length;
		int pos = 0;
		long records = 0;
		String torn = null;
		while (pos < length) {
			int remaining = length - pos;
			if (remaining < WalRecord.HEADER_SIZE) {
				torn = "incomplete header";
				break;
			}
			int payloadLength = buffer.getInt(pos);
			int payloadCrc = buffer.getInt(pos + 4);
			int headerCrc = buffer.getInt(pos + 8);
			if (WalRecord.crc(bytes, pos, 8) != headerCrc) {
				if (zeroFrom(bytes, pos)) {
					torn = "zero-filled tail";
					break;
				}
				if (zeroFrom(bytes, pos + WalRecord.HEADER_SIZE)) {
					torn = "incomplete header followed by zeros";
					break;
				}
				throw new CorruptedStorageException(file, pos, "WAL record header", "checksum mismatch");
			}
			if (payloadLength < 0 || payloadLength > WalRecord.MAX_PAYLOAD) {
				throw new CorruptedStorageException(file, pos, "WAL record header",
						"payload length " + payloadLength + " out of bounds");
			}
			if (payloadLength > remaining - WalRecord.HEADER_SIZE) {
				torn = "incomplete payload";
				break;
			}
			int end = pos + WalRecord.HEADER_SIZE + payloadLength;
			if (WalRecord.crc(bytes, pos + WalRecord.HEADER_SIZE, payloadLength) != payloadCrc) {
				if (end == length) {
					torn = "checksum mismatch in the last record";
					break;
				}
				if (zeroFrom(bytes, end)) {
					torn = "checksum mismatch in the last record, zeros after it";
					break;
				}
				throw new CorruptedStorageException(file, pos, "WAL record",
						"payload checksum mismatch with " + (length - end) + " bytes of log after it");
			}
			Entry entry = WalRecord.decodePayload(bytes, pos + WalRecord.HEADER_SIZE, payloadLength);
			if (entry == null) {
				throw new CorruptedStorageException(file, pos, "WAL record", "malformed payload");
			}
			sink.accept(entry);
			records++;
			pos = end;
		}
		if (torn != null) {
			LOG.log(Level.WARNING, "WAL {0}: dropping a torn last record at offset {1} ({2}, {3} bytes); truncating",
					file, pos, torn, length - pos);
			io.truncate(file, pos);
		}
		return new Replay(records, pos, torn != null);
	}

	/** Whether every byte from {@code from} on (none, past the end) is zero. */
	private static boolean zeroFrom(byte[] bytes, int from) {
		for (int i = from; i < bytes.length; i++) {
			if (bytes[i] != 0) {
				return false;
			}
		}
		return true;
	}

}
