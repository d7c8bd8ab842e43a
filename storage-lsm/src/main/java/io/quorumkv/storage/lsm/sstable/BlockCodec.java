package io.quorumkv.storage.lsm.sstable;

import java.nio.ByteBuffer;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdException;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;
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
	NONE(0),

	/** LZ4 (lz4-java in Java, no native code; decoded with its safe decompressor). */
	LZ4(1),

	/** Zstandard (zstd-jni) at level {@value #ZSTD_LEVEL}. */
	ZSTD(2);

	/**
	 * The largest raw block a decoder accepts: data blocks are cut near the block size.
	 */
	static final int MAX_RAW_LENGTH = 1 << 30;

	/** zstd's own default level: a ratio near level 9's at several times its speed. */
	static final int ZSTD_LEVEL = 3;

	private static final int HEADER = Integer.BYTES;

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
		byte[] stored = switch (this) {
			case NONE -> null;
			case LZ4 -> Lz4.compress(raw);
			case ZSTD -> zstdCompress(raw);
		};
		return (stored != null && stored.length <= raw.length - raw.length / 8) ? stored : null;
	}

	/**
	 * The raw block of a stored one.
	 * @throws Block.BlockFormatException when the stored bytes do not decode to exactly
	 * their declared length
	 */
	byte[] decompress(byte[] stored) {
		if (this == NONE) {
			return stored;
		}
		if (stored.length < HEADER) {
			throw new Block.BlockFormatException("compressed block of " + stored.length + " bytes has no length");
		}
		int rawLength = ByteBuffer.wrap(stored).getInt();
		if (rawLength < 1 || rawLength > MAX_RAW_LENGTH) {
			throw new Block.BlockFormatException("compressed block declares " + rawLength + " raw bytes");
		}
		byte[] raw = new byte[rawLength];
		int produced = switch (this) {
			case LZ4 -> Lz4Reader.decompress(stored, raw);
			case ZSTD -> zstdDecompress(stored, raw);
			case NONE -> throw new IllegalStateException();
		};
		if (produced != rawLength) {
			throw new Block.BlockFormatException(
					name() + " block decoded to " + produced + " bytes, not the " + rawLength + " declared");
		}
		return raw;
	}

	private static byte[] zstdCompress(byte[] raw) {
		long bound = Zstd.compressBound(raw.length);
		byte[] out = new byte[(int) Math.min(Integer.MAX_VALUE - 8, HEADER + bound)];
		long written = Zstd.compressByteArray(out, HEADER, out.length - HEADER, raw, 0, raw.length, ZSTD_LEVEL);
		if (Zstd.isError(written)) {
			throw new IllegalStateException("zstd could not compress a block: " + Zstd.getErrorName(written));
		}
		ByteBuffer.wrap(out).putInt(raw.length);
		return java.util.Arrays.copyOf(out, HEADER + (int) written);
	}

	private static int zstdDecompress(byte[] stored, byte[] raw) {
		long produced;
		try {
			produced = Zstd.decompressByteArray(raw, 0, raw.length, stored, HEADER, stored.length - HEADER);
		}
		catch (ZstdException ex) {
			// zstd-jni reports most decoding errors by throwing, some by an error code.
			throw new Block.BlockFormatException("zstd block does not decode: " + ex.getMessage());
		}
		if (Zstd.isError(produced)) {
			throw new Block.BlockFormatException("zstd block does not decode: " + Zstd.getErrorName(produced));
		}
		return (int) produced;
	}

	/**
	 * The LZ4 codec's compressing side, made on first use (in a flush or a compaction):
	 * the native compressor where lz4-java's library loads, the Java one otherwise. The
	 * Java compressor allocates a 16 KB hash table for every block it compresses (at 100
	 * million keys under 10,000 PUTs/s, 16% of all the node allocated); the native one
	 * keeps it on its stack. The output is the same LZ4 block format either way.
	 */
	private static final class Lz4 {

		private static final LZ4Compressor COMPRESSOR = LZ4Factory.fastestInstance().fastCompressor();

		static byte[] compress(byte[] raw) {
			byte[] out = new byte[HEADER + COMPRESSOR.maxCompressedLength(raw.length)];
			int written = COMPRESSOR.compress(raw, 0, raw.length, out, HEADER, out.length - HEADER);
			ByteBuffer.wrap(out).putInt(raw.length);
			return java.util.Arrays.copyOf(out, HEADER + written);
		}

	}

	/**
	 * The LZ4 codec's reading side: the Java safe decompressor, which checks every offset
	 * against the arrays' bounds. Apart from {@link Lz4} so that a read (which may run on
	 * an event loop) never loads the native library.
	 */
	private static final class Lz4Reader {

		private static final LZ4SafeDecompressor DECOMPRESSOR = LZ4Factory.fastestJavaInstance().safeDecompressor();

		static int decompress(byte[] stored, byte[] raw) {
			try {
				return DECOMPRESSOR.decompress(stored, HEADER, stored.length - HEADER, raw, 0, raw.length);
			}
			catch (LZ4Exception ex) {
				throw new Block.BlockFormatException("LZ4 block does not decode: " + ex.getMessage());
			}
		}

	}

}
