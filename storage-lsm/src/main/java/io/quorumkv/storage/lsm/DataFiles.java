package io.quorumkv.storage.lsm;

import java.nio.file.Path;

import io.quorumkv.storage.lsm.sstable.TableDigest;

/**
 * Names of the files in a data folder. Tables and WAL segments share one file-number
 * sequence, recorded in the manifest.
 *
 * <pre>
 * 000042.sst       an SSTable (000042.sst.tmp while being written)
 * 000042.sst.crc32c  its whole-file CRC32C (TableDigest), written before the table's rename
 * wal-000043.log   a WAL segment
 * MANIFEST         the live tables and the oldest live WAL segment (MANIFEST.tmp while written)
 * LOCK             held (file lock) by the open store
 * </pre>
 */
final class DataFiles {

	static final String TABLE_SUFFIX = TableDigest.TABLE_SUFFIX;

	static final String WAL_PREFIX = "wal-";

	static final String WAL_SUFFIX = ".log";

	static final String LOCK = "LOCK";

	private DataFiles() {
	}

	static Path table(Path dir, long number) {
		return dir.resolve(String.format("%06d%s", number, TABLE_SUFFIX));
	}

	static Path wal(Path dir, long number) {
		return dir.resolve(String.format("%s%06d%s", WAL_PREFIX, number, WAL_SUFFIX));
	}

	/** The number of a table file name, or -1. */
	static long tableNumber(String name) {
		return name.endsWith(TABLE_SUFFIX) ? parse(name.substring(0, name.length() - TABLE_SUFFIX.length())) : -1;
	}

	/**
	 * The number of the table whose digest ({@link TableDigest}) a file name is, or -1.
	 */
	static long digestTableNumber(String name) {
		return name.endsWith(TableDigest.SUFFIX)
				? tableNumber(name.substring(0, name.length() - TableDigest.SUFFIX.length())) : -1;
	}

	/** The number of a WAL segment file name, or -1. */
	static long walNumber(String name) {
		return (name.startsWith(WAL_PREFIX) && name.endsWith(WAL_SUFFIX))
				? parse(name.substring(WAL_PREFIX.length(), name.length() - WAL_SUFFIX.length())) : -1;
	}

	private static long parse(String digits) {
		if (digits.isEmpty() || !digits.chars().allMatch(Character::isDigit) || digits.length() > 18) {
			return -1;
		}
		return Long.parseLong(digits);
	}

}
