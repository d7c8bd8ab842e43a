package io.quorumkv.storage.lsm.io;

import java.io.Closeable;
import java.io.IOException;

/**
 * A file open for sequential writing (see {@link FileIo}). Not thread-safe: the engine
 * serialises its writes (the WAL under its write lock, a table by its one builder).
 */
public interface AppendFile extends Closeable {

	/**
	 * Writes {@code length} bytes at the end of the file. On failure an unknown prefix of
	 * them may have been written.
	 */
	void write(byte[] bytes, int offset, int length) throws IOException;

	/** Forces everything written so far to the disk ({@code fsync}). */
	void sync() throws IOException;

}
