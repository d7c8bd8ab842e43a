package io.quorumkv.storage.lsm.io;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;

/**
 * Every file operation handed to the layer below: a test's layer overrides the ones it
 * changes.
 */
public class ForwardingFileIo implements FileIo {

	private final FileIo delegate;

	public ForwardingFileIo(FileIo delegate) {
		this.delegate = delegate;
	}

	@Override
	public AppendFile createNew(Path path) throws IOException {
		return this.delegate.createNew(path);
	}

	@Override
	public AppendFile createOrTruncate(Path path) throws IOException {
		return this.delegate.createOrTruncate(path);
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
	public void link(Path existing, Path link) throws IOException {
		this.delegate.link(existing, link);
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
