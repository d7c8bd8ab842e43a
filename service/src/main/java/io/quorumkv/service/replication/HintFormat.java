package io.quorumkv.service.replication;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

import com.dynatrace.hash4j.hashing.Hashing;
import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;

/**
 * The layout of a hint in the hint store ({@link HintStore}):
 *
 * <pre>
 * hint key   := 0x00 | u64 XXH3-64(peer id) | SHA-256(key)            (41 bytes)
 * hint value := u8 kind (0 expiring value, 1 value, 2 tombstone) | u16 peerIdLength
 *               | peer id (UTF-8) | u32 keyLength | key
 *               | [i64 expiresAt, kind 0 only] | value bytes
 * </pre>
 *
 * The key is fixed-size whatever the data key's length; the peer's id is in the value so
 * that the store can count each peer's hints when it opens. Reading checks every length
 * before use: a damaged hint is an error naming what is wrong, never a wrong entry.
 */
final class HintFormat {

	static final byte FORMAT = 0x00;

	private static final byte EXPIRING = 0;

	private static final byte VALUE = 1;

	private static final byte TOMBSTONE = 2;

	private static final int PREFIX = 1 + Long.BYTES;

	private HintFormat() {
	}

	/** The prefix of every hint of {@code peer}. */
	static byte[] prefix(String peer) {
		return ByteBuffer.allocate(PREFIX)
			.put(FORMAT)
			.putLong(Hashing.xxh3_64().hashBytesToLong(peer.getBytes(StandardCharsets.UTF_8)))
			.array();
	}

	/** The least key greater than every key starting with {@code prefix}, or null. */
	static byte @Nullable [] successor(byte[] prefix) {
		byte[] next = prefix.clone();
		for (int i = next.length - 1; i >= 0; i--) {
			if (next[i] != (byte) 0xFF) {
				next[i]++;
				return Arrays.copyOf(next, i + 1);
			}
		}
		return null;
	}

	static byte[] hintKey(String peer, byte[] key) {
		byte[] digest = sha256(key);
		return ByteBuffer.allocate(PREFIX + digest.length).put(prefix(peer)).put(digest).array();
	}

	private static byte[] sha256(byte[] key) {
		try {
			return MessageDigest.getInstance("SHA-256").digest(key);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("every JVM has SHA-256", ex);
		}
	}

	static byte[] encode(String peer, Entry entry) {
		byte[] id = peer.getBytes(StandardCharsets.UTF_8);
		if (id.length > 0xFFFF) {
			throw new IllegalArgumentException("peer id of " + id.length + " bytes");
		}
		byte[] key = entry.key();
		byte[] value = entry.value();
		boolean expires = entry.expires();
		byte kind = (value == null) ? TOMBSTONE : expires ? EXPIRING : VALUE;
		ByteBuffer out = ByteBuffer.allocate(
				1 + 2 + id.length + 4 + key.length + (expires ? Long.BYTES : 0) + ((value != null) ? value.length : 0));
		out.put(kind).putShort((short) id.length).put(id).putInt(key.length).put(key);
		if (expires) {
			out.putLong(entry.expiresAt());
		}
		if (value != null) {
			out.put(value);
		}
		return out.array();
	}

	/** The stored hint's value past its kind and peer id, or an error if damaged. */
	private static ByteBuffer open(Entry hint) {
		byte[] stored = hint.value();
		ByteBuffer in = ByteBuffer.wrap((stored != null) ? stored : new byte[0]);
		if (in.remaining() < 3) {
			throw new IllegalStateException("hint of " + in.remaining() + " bytes is damaged");
		}
		byte kind = in.get();
		int idLength = Short.toUnsignedInt(in.getShort());
		if ((kind != VALUE && kind != TOMBSTONE && kind != EXPIRING) || idLength > in.remaining()) {
			throw new IllegalStateException(
					"hint with kind " + kind + " and peer id length " + idLength + " is damaged");
		}
		return in;
	}

	static String peerOf(Entry hint) {
		ByteBuffer in = open(hint);
		byte[] id = new byte[Short.toUnsignedInt(in.getShort(1))];
		in.get(id);
		return new String(id, StandardCharsets.UTF_8);
	}

	static Entry decode(Entry hint) {
		ByteBuffer in = open(hint);
		byte kind = in.get(0);
		in.position(in.position() + Short.toUnsignedInt(in.getShort(1)));
		if (in.remaining() < 4) {
			throw new IllegalStateException("hint without its key length is damaged");
		}
		int keyLength = in.getInt();
		if (keyLength < 1 || keyLength > in.remaining()) {
			throw new IllegalStateException("hint with key length " + keyLength + " is damaged");
		}
		byte[] key = new byte[keyLength];
		in.get(key);
		if (kind == TOMBSTONE) {
			return Entry.wrap(key, null, hint.timestamp(), Entry.NO_EXPIRY);
		}
		long expiresAt = Entry.NO_EXPIRY;
		if (kind == EXPIRING) {
			if (in.remaining() < Long.BYTES) {
				throw new IllegalStateException("expiring hint without its expiry is damaged");
			}
			expiresAt = in.getLong();
		}
		byte[] value = new byte[in.remaining()];
		in.get(value);
		return Entry.wrap(key, value, hint.timestamp(), expiresAt);
	}

}
