package io.quorumkv.storage.lsm.sstable;

/**
 * The versions of the table format ({@code docs/formats/sstable.md}) and what differs
 * between them. A table records its version in its {@link Footer}; the engine writes
 * {@link #CURRENT} and reads both.
 *
 * <ul>
 * <li>version 1: blocks followed by {@code u32 crc32c(block)}; data entries without
 * expiry; properties without the compression fields;</li>
 * <li>version 2: blocks followed by {@code u8 codec | u32 crc32c(stored block, codec)}
 * and data blocks possibly compressed ({@link BlockCodec}); data entries may carry an
 * expiry; properties end with the compression setting and the data bytes before and after
 * compression.</li>
 * </ul>
 */
public final class TableFormat {

	public static final int VERSION_1 = 1;

	public static final int VERSION_2 = 2;

	/** The version new tables are written in. */
	public static final int CURRENT = VERSION_2;

	private TableFormat() {
	}

	static boolean isKnown(int version) {
		return version == VERSION_1 || version == VERSION_2;
	}

	/** Bytes after each block: its checksum, and in version 2 its codec before it. */
	static int trailerSize(int version) {
		return (version == VERSION_1) ? 4 : 5;
	}

}
