package io.quorumkv.storage.lsm.io;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;

/**
 * A deliberately broken engine, for showing that a checker catches it: the engine's
 * {@code fsync} of matching files is skipped (say, of the WAL: acknowledged writes are
 * not durable; of tables: the manifest names a table whose data is not). Everything else
 * goes to the layer below.
 */
public final class SkippedSyncs implements FileIo {

	private final FileIo delegate;

	private final Pattern files;

	private SkippedSyncs(FileIo delegate, Pattern files) {
		this.delegate = delegate;
		this.files = files;
	}

	/** Wraps a file layer so that syncs of files named like {@code regex} do nothing. */
	public static UnaryOperator<FileIo> of(String regex) {
		Pattern files = Pattern.compile(regex);
		return (io) -> new SkippedSyncs(io, files);
	}

	private AppendFile wrap(Path path, AppendFile file) {
		if (!this.files.matcher(path.getFileName().toString()).matches()) {
			return file;
		}
		return new AppendFile() {

			@Override
			public void write(byte[] bytes, int offset, int length) throws IOException {
				file.write(bytes, offset, length);
			}

			@Override
			public void sync() {
				// The defect.
			}

			@Override
			public void close() throws IOException {
				file.close();
			}

		};
	}

	@Override
	public AppendFile createNew(Path path) throws IOException {
		return wrap(path, this.delegate.createNew(path));
	}

	@Override
	public AppendFile createOrTruncate(Path path) throws IOException {
		return wrap(path, this.delegate.createOrTruncate(path));
	}

	@Override
	public byte[] readAll(Path path) throws IOException {
		return this.delegate.readAll(path);
	}

	@Override
	public MemorySegment map(Path path, Arena arena) throws IOException {
		return this.delegate.map(path, arena);
	}

	@Override
	public void truncate(Path path, long length) throws IOException {
		this.delegate.truncate(path, length);
	}

	@Override
	public void rename(Path from, Path to) throws IOException {
		this.delegate.rename(from, to);
	}

	@Override
	public boolean deleteIfExists(Path path) throws IOException {
		return this.delegate.deleteIfExists(path);
	}

	@Override
	public void syncDirectory(Path dir) throws IOException {
		this.delegate.syncDirectory(dir);
	}

	@Override
	public List<Path> list(Path dir) throws IOException {
		return this.delegate.list(dir);
	}

	@Override
	public boolean exists(Path path) {
		return this.delegate.exists(path);
	}

}
