package io.quorumkv.service.replication;

import java.nio.ByteBuffer;

import io.quorumkv.service.config.QuorumKvProperties.BatchProperties;
import io.quorumkv.storage.Entry;

/**
 * The node-to-node protocol on {@code /internal/v0}: paths, headers and the binary frame
 * of a replica scan. Only callers presenting the cluster secret are served.
 *
 * <ul>
 * <li>{@code GET /internal/v0/entry?id=K}: 200 with the value and {@link #TIMESTAMP},
 * {@link #TOMBSTONE} headers, and {@link #EXPIRES_AT} for a value that expires; 404 with
 * {@link #ABSENT} when never written.</li>
 * <li>{@code PUT /internal/v0/entry?id=K} with {@link #TIMESTAMP}, {@link #TOMBSTONE}
 * and, for a value that expires, {@link #EXPIRES_AT}, body = value: 201; the replica
 * keeps the greater entry.</li>
 * <li>{@code GET /internal/v0/entries?start=K[&end=K]}: a stream of {@link #encode
 * frames}, tombstones included, in key order.</li>
 * <li>{@code POST /internal/v0/batch}, body = operations ({@link BatchCodec}): 200 with
 * one result per operation, in order.</li>
 * </ul>
 */
public final class InternalApi {

	public static final String ENTRY_PATH = "/internal/v0/entry";

	public static final String ENTRIES_PATH = "/internal/v0/entries";

	public static final String BATCH_PATH = "/internal/v0/batch";

	public static final String SECRET = "X-QuorumKV-Secret";

	public static final String TIMESTAMP = "X-QuorumKV-Timestamp";

	public static final String TOMBSTONE = "X-QuorumKV-Tombstone";

	public static final String ABSENT = "X-QuorumKV-Absent";

	/**
	 * The expiry of an expiring value, in microseconds ({@code Entry.expiresAt}); absent
	 * for a value that does not expire and for a tombstone. An older node ignores the
	 * header: see docs/api.md on upgrading before using a time to live.
	 */
	public static final String EXPIRES_AT = "X-QuorumKV-Expires-At";

	private static final char[] HEX = "0123456789ABCDEF".toCharArray();

	private InternalApi() {
	}

	/**
	 * The largest batch body (request or answer) a node sends or accepts: the configured
	 * batch size, but at least one value of the largest size with its key and framing.
	 */
	public static int maxBatchBody(BatchProperties batch, int maxBodySize) {
		return Math.max((int) batch.maxBytes().toBytes(), maxBodySize + 65_536);
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
	 * One scan frame ({@link EntryFrame}: the entry, with its expiry when it has one).
	 */
	public static byte[] encode(Entry entry) {
		ByteBuffer frame = ByteBuffer.allocate(EntryFrame.size(entry));
		EntryFrame.put(frame, entry);
		return frame.array();
	}

}
