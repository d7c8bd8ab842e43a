package io.quorumkv.service.repair;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import io.quorumkv.service.repair.RepairCodec.MalformedRepairException;
import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;

/**
 * Cuts a stream of digest frames ({@link RepairCodec}) into digests, whatever the
 * boundaries of the network buffers; holds at most one incomplete frame, whose key is
 * never longer than {@code maxKeySize}.
 */
final class DigestDecoder {

	private final int maxKeySize;

	private ByteBuffer pending = ByteBuffer.allocate(0);

	DigestDecoder(int maxKeySize) {
		this.maxKeySize = maxKeySize;
	}

	List<EntryDigest> decode(byte[] chunk) {
		ByteBuffer input = ByteBuffer.allocate(this.pending.remaining() + chunk.length);
		input.put(this.pending).put(chunk).flip();
		List<EntryDigest> digests = new ArrayList<>();
		while (true) {
			input.mark();
			EntryDigest digest = next(input);
			if (digest == null) {
				input.reset();
				break;
			}
			digests.add(digest);
		}
		this.pending = input.slice();
		return digests;
	}

	boolean isComplete() {
		return !this.pending.hasRemaining();
	}

	private @Nullable EntryDigest next(ByteBuffer in) {
		if (in.remaining() < 4) {
			return null;
		}
		int keyLength = in.getInt();
		if (keyLength < 1 || keyLength > this.maxKeySize) {
			throw new MalformedRepairException("digest key of " + keyLength + " bytes");
		}
		if (in.remaining() < keyLength + RepairCodec.DIGEST_FIXED - 4) {
			return null;
		}
		byte[] key = new byte[keyLength];
		in.get(key);
		long timestamp = in.getLong();
		byte kind = in.get();
		if (kind != RepairCodec.VALUE && kind != RepairCodec.TOMBSTONE && kind != RepairCodec.EXPIRING) {
			throw new MalformedRepairException("digest kind " + kind);
		}
		long valueHigh = in.getLong();
		long valueLow = in.getLong();
		long expiresAt = Entry.NO_EXPIRY;
		if (kind == RepairCodec.EXPIRING) {
			if (in.remaining() < Long.BYTES) {
				return null;
			}
			expiresAt = in.getLong();
			if (expiresAt == Entry.NO_EXPIRY) {
				throw new MalformedRepairException("expiring digest without an expiry");
			}
		}
		return new EntryDigest(key, timestamp, kind == RepairCodec.TOMBSTONE, valueHigh, valueLow, expiresAt);
	}

}
