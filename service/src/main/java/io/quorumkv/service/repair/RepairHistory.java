package io.quorumkv.service.repair;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.quorumkv.service.storage.ChecksummedFile;

/**
 * When each range was last repaired successfully, per repairing node, kept in the data
 * folder ({@code <quorumkv.storage.path>/repair-history}): the start of the last repair
 * run by that node in each scope that reached every replica of the range, on the
 * repairing node's clock. Such a repair compared every key of the range it covers (in
 * scope {@code primary} the keys the repairing node is the primary of, in scope
 * {@code all} every key it owns) with each of its other owners (see
 * {@link RangeReplicas#shared}), so tombstones of those keys written before it may be
 * purged once past the grace period (DESIGN §3). A repair of scope {@code all} is
 * recorded under both scopes.
 *
 * <pre>
 * payload := u32 n | (i64 start | i64 end | i64 repairedAt | u8 scope (0 primary, 1 all)
 *            | u16 idLength | repairer id) * n
 * </pre>
 *
 * in a {@link ChecksummedFile} envelope (magic {@code QKVR}, version 2), rewritten whole
 * on every change. Invariant: a range's time per repairer only grows. Version 1 (one time
 * per range, before the ring) is not read: its ranges meant every key on every node.
 */
final class RepairHistory {

	static final int MAGIC = 0x514b5652;

	static final int VERSION = 2;

	/** A range as repaired by one node in one scope. */
	record Key(TokenRange range, String repairer, RepairService.Scope scope) {
	}

	private final ChecksummedFile file;

	private final Map<Key, Long> repairedAt = new ConcurrentHashMap<>();

	private RepairHistory(ChecksummedFile file) {
		this.file = file;
	}

	static RepairHistory open(Path path) throws IOException {
		RepairHistory history = new RepairHistory(new ChecksummedFile(path, MAGIC, VERSION));
		byte[] payload = history.file.read();
		if (payload != null) {
			ByteBuffer in = ByteBuffer.wrap(payload);
			try {
				int n = in.getInt();
				if (n < 0 || (long) n * 27 > in.remaining()) {
					throw new IOException(
							path + ": repair history of " + payload.length + " bytes lists " + n + " ranges");
				}
				for (int i = 0; i < n; i++) {
					TokenRange range = new TokenRange(in.getLong(), in.getLong());
					long at = in.getLong();
					byte scope = in.get();
					if (scope != 0 && scope != 1) {
						throw new IOException(path + ": repair history with scope " + scope);
					}
					byte[] id = new byte[Short.toUnsignedInt(in.getShort())];
					in.get(id);
					history.repairedAt.put(new Key(range, new String(id, StandardCharsets.UTF_8),
							(scope == 0) ? RepairService.Scope.PRIMARY : RepairService.Scope.ALL), at);
				}
				if (in.hasRemaining()) {
					throw new IOException(path + ": " + in.remaining() + " bytes after the repair history's entries");
				}
			}
			catch (java.nio.BufferUnderflowException | IllegalArgumentException ex) {
				throw new IOException(path + ": repair history cut short or damaged: " + ex, ex);
			}
		}
		return history;
	}

	/**
	 * The start of the last successful repair of the range by {@code repairer} in
	 * {@code scope} (for {@code PRIMARY}, of either scope), or {@link Long#MIN_VALUE}.
	 */
	long repairedAt(TokenRange range, String repairer, RepairService.Scope scope) {
		return this.repairedAt.getOrDefault(new Key(range, repairer, scope), Long.MIN_VALUE);
	}

	/**
	 * Records a successful repair of {@code ranges} by {@code repairer} in {@code scope}
	 * started at {@code at}, durably.
	 */
	synchronized void record(Collection<TokenRange> ranges, String repairer, RepairService.Scope scope, long at) {
		ranges.forEach((range) -> {
			this.repairedAt.merge(new Key(range, repairer, RepairService.Scope.PRIMARY), at, Math::max);
			if (scope == RepairService.Scope.ALL) {
				this.repairedAt.merge(new Key(range, repairer, RepairService.Scope.ALL), at, Math::max);
			}
		});
		List<byte[]> ids = new ArrayList<>();
		int size = 4;
		for (Key key : this.repairedAt.keySet()) {
			byte[] id = key.repairer().getBytes(StandardCharsets.UTF_8);
			ids.add(id);
			size += 27 + id.length;
		}
		ByteBuffer out = ByteBuffer.allocate(size);
		out.putInt(ids.size());
		int i = 0;
		for (Key key : this.repairedAt.keySet()) {
			byte[] id = ids.get(i++);
			out.putLong(key.range().start())
				.putLong(key.range().end())
				.putLong(this.repairedAt.get(key))
				.put((byte) ((key.scope() == RepairService.Scope.PRIMARY) ? 0 : 1))
				.putShort((short) id.length)
				.put(id);
		}
		try {
			this.file.write(out.array());
		}
		catch (IOException ex) {
			throw new UncheckedIOException("cannot write the repair history " + this.file.path(), ex);
		}
	}

}
