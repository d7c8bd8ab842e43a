package io.quorumkv.service.peer;

import java.nio.ByteBuffer;

import io.quorumkv.service.security.InternalAuth;
import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;

/**
 * The node-to-node protocol on {@code /internal/v0}: paths, headers and the binary frame
 * of a replica scan. Only callers presenting the cluster secret are served.
 *
 * <ul>
 * <li>{@code POST /internal/v0/stream}: a replica stream; the request body is a stream of
 * operation frames (gets, upserts, heartbeats), the answer a stream of result frames
 * matched by id ({@code io.quorumkv.service.peer.StreamFrames}). Every replica read and
 * write travels on it, hints and read repair included.</li>
 * <li>{@code GET /internal/v0/entries?start=K[&end=K][&limit=N]}: a stream of
 * {@link io.quorumkv.service.peer.EntryFrame frames}, tombstones included, in key order,
 * at most {@code N} (400 when not a positive integer up to a billion): one page of a
 * range read.</li>
 * <li>{@code POST /internal/v0/repair/trees|nodes|digests|done} and
 * {@code DELETE /internal/v0/repair/session?id=S}: anti-entropy repair, binary bodies of
 * {@code io.quorumkv.service.repair.RepairCodec}.</li>
 * </ul>
 * Every call names its sender in {@link #FROM}; every answer carries the answering node's
 * wall clock in {@link #CLOCK} (microseconds since the epoch), from which callers measure
 * its clock offset. A write whose timestamp is too far ahead of the replica's clock is
 * refused (on a stream: that operation is answered "clock skew").
 */
public final class InternalApi {

	public static final String ENTRIES_PATH = "/internal/v0/entries";

	/** Anti-entropy repair: trees, their nodes, digests, a session's end, its outcome. */
	public static final String REPAIR_TREES_PATH = "/internal/v0/repair/trees";

	public static final String REPAIR_NODES_PATH = "/internal/v0/repair/nodes";

	public static final String REPAIR_DIGESTS_PATH = "/internal/v0/repair/digests";

	public static final String REPAIR_SESSION_PATH = "/internal/v0/repair/session";

	public static final String REPAIR_DONE_PATH = "/internal/v0/repair/done";

	/** {@code GET}: the ring this node serves under, as JSON ({@code RingJson}). */
	public static final String RING_PATH = "/internal/v0/ring";

	/**
	 * {@code GET ?change=ID&start=K}: the entries this node owes the caller in the change
	 * under way, as a stream of frames ({@code TransferCodec}).
	 */
	public static final String TRANSFER_PATH = "/internal/v0/transfer";

	/** {@code GET}: this node's transfers in the change under way, as JSON. */
	public static final String TRANSFERS_PATH = "/internal/v0/transfers";

	/**
	 * {@code GET}: this node's clean-up, as JSON:
	 * {@code {"waiting":…,"running":…,"last":…}} (an automatic one waiting for its turn,
	 * one running, what the last one did).
	 */
	public static final String CLEANUP_PATH = "/internal/v0/cleanup";

	/**
	 * {@code POST /internal/v0/raft/<kind>}: one call of the metadata layer's Raft RPC,
	 * the body a serialized Ratis message of that kind, the answer its serialized reply
	 * ({@code io.quorumkv.service.metadata}).
	 */
	public static final String RAFT_PATH = "/internal/v0/raft";

	/** {@code GET}: 200 {@code {"id":…,"url":…,"clusterId":…|null,"epoch":n}}. */
	public static final String RING_IDENTITY_PATH = "/internal/v0/ring/identity";

	/**
	 * {@code POST /internal/v0/ring/join?url=U}: a node waiting to be joined asks a
	 * member to join it, as an operator's {@code join} would
	 * ({@code quorumkv.cluster.membership.auto-join}).
	 */
	public static final String RING_JOIN_PATH = "/internal/v0/ring/join";

	public static final String SECRET = InternalAuth.SECRET;

	public static final String FROM = "X-QuorumKV-From";

	public static final String CLOCK = "X-QuorumKV-Clock";

	public static final String REFUSED = "X-QuorumKV-Refused";

	public static final String REFUSED_CLOCK_SKEW = "clock-skew";

	/**
	 * The ring of the sender of a call or of an answer:
	 * {@code <epoch> <cluster id> <node id> <node URL>} ({@code RingStamp}).
	 */
	public static final String RING = "X-QuorumKV-Ring";

	private static final char[] HEX = "0123456789ABCDEF".toCharArray();

	private InternalApi() {
	}

	/**
	 * The largest frame (and other binary body between nodes) a node sends or accepts:
	 * the configured size, but at least one value of the largest size with its key and
	 * framing.
	 */
	public static int maxFrame(StreamProperties stream, int maxBodySize) {
		return Math.max((int) stream.maxFrame().toBytes(), maxBodySize + 65_536);
	}

	/** Percent-encodes every byte but RFC 3986 unreserved characters. */
	public static String encodeKey(byte[] key) {
		StringBuilder out = new StringBuilder(key.length * 2);
		for (byte b : key) {
			int c = b & 0xFF;
			if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.'
					|| c == '_' || c == '~') {
				out.append((char) c);
			}
			else {
				out.append('%').append(HEX[c >> 4]).append(HEX[c & 0xF]);
			}
		}
		return out.toString();
	}

	/**
	 * The scan frame ({@link EntryFrame#encode}) at {@code in}'s position, for streams
	 * that carry these frames among frames of their own (a transfer stream).
	 * @return the entry, or null when {@code in} ends inside the frame (its position is
	 * then undefined)
	 * @throws IllegalArgumentException when a length is out of its bounds
	 */
	public static @Nullable Entry decode(ByteBuffer in, int maxFrameSize) {
		try {
			return EntryFrame.read(in, maxFrameSize, maxFrameSize);
		}
		catch (java.nio.BufferUnderflowException ex) {
			return null;
		}
		catch (EntryFrame.MalformedFrameException ex) {
			throw new IllegalArgumentException(ex.getMessage());
		}
	}

}
