package io.quorumkv.storage.lsm.sstable;

import java.util.Arrays;

import org.jspecify.annotations.Nullable;

/**
 * How a version-2 data block is stored: its codec id is the byte before the block's
 * checksum ({@code docs/formats/sstable.md}). A compressed block is
 * {@code u32 rawLength | compressed bytes}; a block is stored raw ({@link #NONE}) when
 * compression does not save at least an eighth of it, whatever the table's setting.
 *
 * <p>
 * Decoding runs only on a block whose checksum matched (the checksum covers the stored
 * bytes), and checks the declared raw length against a bound and against what the codec
 * produced: a damaged block is reported, never decoded into other bytes.
 */
public enum BlockCodec {

	/** Stored as is. */
	NONE(0);

	/**
	 * The largest raw block a decoder accepts: data blocks are cut near the block size.
	 */
	static final int MAX_RAW_LENGTH = 1 << 30;

	private final int id;

	BlockCodec(int id) {
		this.id = id;
	}

	/** The id stored after each block. */
	public int id() {
		return this.id;
	}

	/** The codec of {@code id}, or {@code null} when none has it. */
	static @Nullable BlockCodec byId(int id) {
		for (BlockCodec codec : values()) {
			if (codec.id == id) {
				return codec;
			}
		}
		return null;
	}

	/**
	 * The stored form of {@code raw} with this codec, or {@code null} when it would not
	 * save at least an eighth (the block is then stored raw).
	 */
	byte @Nullable [] compress(byte[] raw) {
		return switch (this) {
			case NONE -> null;
		};
	}

	/**
	 * The raw block of a stored one.
	 * @throws Block.BlockFormatException when the stored bytes do not decode to exactly
	 * their declared length
	 */
	byte[] decompress(byte[] stored) {
		return switch (this) {
			case NONE -> stored;
		};
	}

	/** Whether {@code compressed} is worth storing instead of {@code raw}. */
	static boolean saves(byte[] raw, int compressedLength) {
		return compressedLength <= raw.length - raw.length / 8;
	}

	static byte[] copyOf(byte[] bytes, int length) {
		return (bytes.length == length) ? bytes : Arrays.copyOf(bytes, length);
	}

}
