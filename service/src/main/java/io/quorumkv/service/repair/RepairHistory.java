package io.quorumkv.service.repair;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.quorumkv.service.storage.ChecksummedFile;

/**
 * When each range was last repaired successfully, kept in the data folder
 * ({@code <quorumkv.storage.path>/repair-history}): the start of the last repair that
 * reached every replica of the range, on the clock of the node that ran it. Tombstones of
 * a range written before that may be purged once past the grace period (DESIGN §3).
 *
 * <pre>
 * payload := u32 n | (i64 start | i64 end | i64 repairedAt) * n
 * </pre>
 *
 * in a {@link ChecksummedFile} envelope (magic {@code QKVR}, version 1), rewritten whole
 * on every change. Invariant: a range's time only grows.
 */
final class RepairHistory {

	static final int MAGIC = 0x514b5652;

	private final ChecksummedFile file;

	private final Map<TokenRange, Long> repairedAt = new ConcurrentHashMap<>();

	private RepairHistory(ChecksummedFile file) {
		this.file = file;
	}

	static RepairHistory open(Path path) throws IOException {
		RepairHistory history = new RepairHistory(new ChecksummedFile(path, MAGIC, 1));
		byte[] payload = history.file.read();
		if (payload != null) {
			ByteBuffer in = ByteBuffer.wrap(payload);
			int n = in.getInt();
			if (n < 0 || (long) n * 24 != in.remaining()) {
				throw new IOException(path + ": repair history of " + payload.length + " bytes lists " + n + " ranges");
			}
			for (int i = 0; i < n; i++) {
				history.repairedAt.put(new TokenRange(in.getLong(), in.getLong()), in.getLong());
			}
		}
		return history;
	}

	/** The start of the range's last successful repair, or {@link Long#MIN_VALUE}. */
	long repairedAt(TokenRange range) {
		return this.repairedAt.getOrDefault(range, Long.MIN_VALUE);
	}

	/** Records a successful repair of {@code ranges} started at {@code at}, durably. */
	synchronized void record(Collection<TokenRange> ranges, long at) {
		ranges.forEach((range) -> this.repairedAt.merge(range, at, Math::max));
		ByteBuffer out = ByteBuffer.allocate(4 + this.repairedAt.size() * 24);
		out.putInt(this.repairedAt.size());
		this.repairedAt.forEach((range, time) -> out.putLong(range.start()).putLong(range.end()).putLong(time));
		try {
			this.file.write(out.array());
		}
		catch (IOException ex) {
			throw new UncheckedIOException("cannot write the repair history " + this.file.path(), ex);
		}
	}

}
