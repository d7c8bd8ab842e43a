package io.quorumkv.storage.lsm;

import io.quorumkv.storage.lsm.sstable.BlockCodec;

/**
 * How new tables' data blocks are compressed ({@link LsmOptions#compression()}). Each
 * table records the codec of each block, so tables written under another setting (or
 * before compression existed) are read as they are; a compaction rewrites its inputs
 * under the current setting.
 */
public enum Compression {

	/** Blocks stored as they are. */
	NONE(BlockCodec.NONE),

	/** LZ4: fast to compress and to decode, a moderate ratio. */
	LZ4(BlockCodec.LZ4),

	/** Zstandard at level 3: a better ratio, slower to compress and decode than LZ4. */
	ZSTD(BlockCodec.ZSTD);

	private final BlockCodec codec;

	Compression(BlockCodec codec) {
		this.codec = codec;
	}

	BlockCodec codec() {
		return this.codec;
	}

}
