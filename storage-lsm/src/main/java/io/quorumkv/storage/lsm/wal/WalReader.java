package io.quorumkv.storage.lsm.wal;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.function.Consumer;

import io.quorumkv.storage.CorruptedStorageException;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.io.FileIo;
import org.jspecify.annotations.Nullable;

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

	/** Reads of a file whose tail looks torn before it is called damage. */
	static final int MAX_READS = 3;

	private WalReader() {
	}

	/** What a replay found. */
	public record Replay(long records, long validLength, boolean tornTail) {
	}

	/**
	 * Replays {@code file} into {@code sink}, truncating a torn tail. A tail that looks
	 * torn is cut only when the file reads the same again: a read that flipped a bit of a
	 * whole record (a transient fault of the disk or the bus) would otherwise cut an
	 * acknowledged write off the log for good, as RocksDB's file systems re-read a block
	 * whose checksum fails before calling it corrupt. The rest of the file is replayed
	 * from the new read; a tail that reads differently {@link #MAX_READS} times is
	 * damage.
	 */
	public static Replay replay(FileIo io, Path file, Consumer<Entry> sink) throws IOException {
		byte[] bytes = io.readAll(file);
		int from = 0;
		long records = 0;
		for (int read = 1;; read++) {
			Scan scan = scan(bytes, from, file, sink);
			records += scan.records();
			if (scan.torn() == null) {
				return new Replay(records, scan.pos(), false);
			}
			byte[] again = io.readAll(file);
			if (Arrays.equals(again, bytes)) {
				LOG.log(Level.WARNING,
						"WAL {0}: dropping a torn last record at offset {1} ({2}, {3} bytes); truncating", file,
						scan.pos(), scan.torn(), bytes.length - scan.pos());
				io.truncate(file, scan.pos());
				return new Replay(records, scan.pos(), true);
			}
			if (read == MAX_READS) {
				throw new CorruptedStorageException(file, scan.pos(), "WAL record",
						"its tail reads differently each time (" + (read + 1) + " reads)");
			}
			LOG.log(Level.WARNING, "WAL {0}: the record at offset {1} failed its check ({2}) and reads differently "
					+ "a second time; replaying the rest from the new read", file, scan.pos(), scan.torn());
			bytes = again;
			from = scan.pos();
		}
	}

	/**
	 * Reads {@code file} into {@code sink} without changing it (a copied segment, an
	 * incremental backup's link): every record's checksums are checked as {@link #replay}
	 * does, damage throws {@link CorruptedStorageException} naming file and offset, and a
	 * torn tail is reported ({@link Replay#tornTail()}, with the length of the whole
	 * records before it) rather than cut. Read once: the caller decides whether a torn
	 * tail may be there.
	 */
	public static Replay read(FileIo io, Path file, Consumer<Entry> sink) throws IOException {
		Scan scan = scan(io.readAll(file), 0, file, sink);
		return new Replay(scan.records(), scan.pos(), scan.torn() != null);
	}

	/** How far a scan got: where it stopped, the records it replayed, why it stopped. */
	private record Scan(int pos, long records, @Nullable String torn) {
	}

	/** Replays the records of {@code bytes} from {@code pos} until the end or a tear. */
	private static Scan scan(byte[] bytes, int pos, Path file, Consumer<Entry> sink) {
		ByteBuffer buffer = ByteBuffer.wrap(bytes).order(ByteOrder.BIG_ENDIAN);
		int length = bytes.length;
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
		return new Scan(pos, records, torn);
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
