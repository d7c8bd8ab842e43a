package io.quorumkv.service.repair;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import io.quorumkv.service.peer.FrameDecoder;
import io.quorumkv.service.repair.MerkleTree.NodeHash;
import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;

/**
 * The bodies of the repair routes ({@code /internal/v0/repair/...}), big-endian:
 *
 * <pre>
 * session  := i64 high | i64 low                            (a random id per repair)
 * trees    := session | u32 depth | u32 n | (i64 start | i64 end) * n     → hashes
 * nodes    := session | u32 n | (u32 tree | u32 level | u32 index) * n    → hashes
 * digests  := session | u32 n | (u32 tree | u32 level | u32 index) * n    → digest*
 * done     := i64 repairedAt | u32 n | (i64 start | i64 end) * n
 * hashes   := u32 n | (i64 high | i64 low | i64 count) * n
 * digest   := u32 keyLength | key | i64 timestamp | u8 kind | i64 valueHigh | i64 valueLow
 *             | [i64 expiresAt, kind 2 only]
 * kind     := 0 value | 1 tombstone | 2 expiring value
 * </pre>
 *
 * Kind 2 came with expiry; a node of before refuses it as malformed, so a repair between
 * versions fails loudly rather than dropping an expiry (send {@code ttl} only once every
 * node runs a version with it, docs/api.md).
 *
 * Every decoder checks each count and length against the bytes it was given and fails
 * with {@link MalformedRepairException} instead of reading past them.
 */
final class RepairCodec {

	static final int DIGEST_FIXED = 4 + 8 + 1 + 16;

	static final byte VALUE = 0;

	static final byte TOMBSTONE = 1;

	static final byte EXPIRING = 2;

	private RepairCodec() {
	}

	/** A repair's id on every replica it involves. */
	record SessionId(long high, long low) {

		static SessionId random() {
			ThreadLocalRandom random = ThreadLocalRandom.current();
			return new SessionId(random.nextLong(), random.nextLong());
		}

		static SessionId parse(String hex) {
			if (hex.length() != 32) {
				throw new MalformedRepairException("session id must be 32 hex digits");
			}
			try {
				return new SessionId(Long.parseUnsignedLong(hex.substring(0, 16), 16),
						Long.parseUnsignedLong(hex.substring(16), 16));
			}
			catch (NumberFormatException ex) {
				throw new MalformedRepairException("session id must be 32 hex digits");
			}
		}

		String hex() {
			return String.format("%016x%016x", this.high, this.low);
		}

	}

	/** A node of one of a session's trees: the tree's position in the session. */
	record NodeRef(int tree, int level, int index) {
	}

	record TreesRequest(SessionId session, int depth, List<TokenRange> ranges) {
	}

	record NodesRequest(SessionId session, List<NodeRef> nodes) {
	}

	record Done(long repairedAt, List<TokenRange> ranges) {
	}

	static byte[] trees(TreesRequest request) {
		ByteBuffer out = ByteBuffer.allocate(16 + 8 + request.ranges().size() * 16);
		putSession(out, request.session()).putInt(request.depth()).putInt(request.ranges().size());
		request.ranges().forEach((range) -> out.putLong(range.start()).putLong(range.end()));
		return out.array();
	}

	static TreesRequest trees(byte[] body) {
		return decode(body, (in) -> {
			SessionId session = session(in);
			int depth = in.getInt();
			if (depth < 0 || depth > MerkleTree.MAX_DEPTH) {
				throw new MalformedRepairException("tree depth " + depth + " out of 0.." + MerkleTree.MAX_DEPTH);
			}
			int n = count(in, 16);
			List<TokenRange> ranges = new ArrayList<>(n);
			for (int i = 0; i < n; i++) {
				long start = in.getLong();
				long end = in.getLong();
				if (end < start) {
					throw new MalformedRepairException("range ends before it starts");
				}
				ranges.add(new TokenRange(start, end));
			}
			return new TreesRequest(session, depth, ranges);
		});
	}

	static byte[] nodes(NodesRequest request) {
		ByteBuffer out = ByteBuffer.allocate(16 + 4 + request.nodes().size() * 12);
		putSession(out, request.session()).putInt(request.nodes().size());
		request.nodes().forEach((node) -> out.putInt(node.tree()).putInt(node.level()).putInt(node.index()));
		return out.array();
	}

	static NodesRequest nodes(byte[] body) {
		return decode(body, (in) -> {
			SessionId session = session(in);
			int n = count(in, 12);
			List<NodeRef> nodes = new ArrayList<>(n);
			for (int i = 0; i < n; i++) {
				nodes.add(new NodeRef(in.getInt(), in.getInt(), in.getInt()));
			}
			return new NodesRequest(session, nodes);
		});
	}

	static byte[] hashes(List<NodeHash> hashes) {
		ByteBuffer out = ByteBuffer.allocate(4 + hashes.size() * 24);
		out.putInt(hashes.size());
		hashes.forEach((hash) -> out.putLong(hash.high()).putLong(hash.low()).putLong(hash.count()));
		return out.array();
	}

	static List<NodeHash> hashes(byte[] body) {
		return decode(body, (in) -> {
			int n = count(in, 24);
			List<NodeHash> hashes = new ArrayList<>(n);
			for (int i = 0; i < n; i++) {
				hashes.add(new NodeHash(in.getLong(), in.getLong(), in.getLong()));
			}
			return hashes;
		});
	}

	static byte[] done(Done done) {
		ByteBuffer out = ByteBuffer.allocate(8 + 4 + done.ranges().size() * 16);
		out.putLong(done.repairedAt()).putInt(done.ranges().size());
		done.ranges().forEach((range) -> out.putLong(range.start()).putLong(range.end()));
		return out.array();
	}

	static Done done(byte[] body) {
		return decode(body, (in) -> {
			long repairedAt = in.getLong();
			int n = count(in, 16);
			List<TokenRange> ranges = new ArrayList<>(n);
			for (int i = 0; i < n; i++) {
				long start = in.getLong();
				long end = in.getLong();
				if (end < start) {
					throw new MalformedRepairException("range ends before it starts");
				}
				ranges.add(new TokenRange(start, end));
			}
			return new Done(repairedAt, ranges);
		});
	}

	static byte[] digest(EntryDigest digest) {
		byte[] key = digest.key();
		boolean expires = digest.expires();
		ByteBuffer out = ByteBuffer.allocate(DIGEST_FIXED + key.length + (expires ? Long.BYTES : 0))
			.putInt(key.length)
			.put(key)
			.putLong(digest.timestamp())
			.put(digest.tombstone() ? TOMBSTONE : expires ? EXPIRING : VALUE)
			.putLong(digest.valueHigh())
			.putLong(digest.valueLow());
		if (expires) {
			out.putLong(digest.expiresAt());
		}
		return out.array();
	}

	/**
	 * The next digest frame of a stream ({@link #digest(EntryDigest)}), or null when
	 * {@code in} ends inside it; a key is never longer than {@code maxKeySize}. A
	 * {@link FrameDecoder} reader.
	 */
	static @Nullable EntryDigest readDigest(ByteBuffer in, int maxKeySize) {
		if (in.remaining() < 4) {
			return null;
		}
		int keyLength = in.getInt();
		if (keyLength < 1 || keyLength > maxKeySize) {
			throw new MalformedRepairException("digest key of " + keyLength + " bytes");
		}
		if (in.remaining() < keyLength + DIGEST_FIXED - 4) {
			return null;
		}
		byte[] key = new byte[keyLength];
		in.get(key);
		long timestamp = in.getLong();
		byte kind = in.get();
		if (kind != VALUE && kind != TOMBSTONE && kind != EXPIRING) {
			throw new MalformedRepairException("digest kind " + kind);
		}
		long valueHigh = in.getLong();
		long valueLow = in.getLong();
		long expiresAt = Entry.NO_EXPIRY;
		if (kind == EXPIRING) {
			if (in.remaining() < Long.BYTES) {
				return null;
			}
			expiresAt = in.getLong();
			if (expiresAt == Entry.NO_EXPIRY) {
				throw new MalformedRepairException("expiring digest without an expiry");
			}
		}
		return new EntryDigest(key, timestamp, kind == TOMBSTONE, valueHigh, valueLow, expiresAt);
	}

	/** A decoder of a stream of digest frames. */
	static FrameDecoder<EntryDigest> digests(int maxKeySize) {
		return new FrameDecoder<>((in) -> readDigest(in, maxKeySize));
	}

	private static ByteBuffer putSession(ByteBuffer out, SessionId session) {
		return out.putLong(session.high()).putLong(session.low());
	}

	private static SessionId session(ByteBuffer in) {
		return new SessionId(in.getLong(), in.getLong());
	}

	/** A count of items of {@code size} bytes each, checked against what is left. */
	private static int count(ByteBuffer in, int size) {
		int n = in.getInt();
		if (n < 0 || (long) n * size != in.remaining()) {
			throw new MalformedRepairException(
					"count " + n + " of " + size + "-byte items does not match " + in.remaining() + " bytes");
		}
		return n;
	}

	private static <T> T decode(byte[] body, Decoder<T> decoder) {
		try {
			return decoder.decode(ByteBuffer.wrap(body));
		}
		catch (BufferUnderflowException ex) {
			throw new MalformedRepairException("repair body of " + body.length + " bytes is truncated");
		}
	}

	private interface Decoder<T> {

		T decode(ByteBuffer in);

	}

	/** A repair body that is not what the protocol says; answered 400. */
	static final class MalformedRepairException extends IllegalArgumentException {

		MalformedRepairException(String message) {
			super(message);
		}

	}

}
