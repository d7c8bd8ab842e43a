package io.quorumkv.storage.lsm.io;

import java.io.FileOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.channels.FileChannel.MapMode;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * {@link FileIo} on NIO. Files are written through {@link FileOutputStream}, not a
 * {@code FileChannel}: an interrupted thread closes an interruptible channel for
 * everyone, and a caller's thread may be interrupted (a cancelled task) in the middle of
 * a WAL append.
 */
final class RealFileIo implements FileIo {

	static final RealFileIo INSTANCE = new RealFileIo();

	private RealFileIo() {
	}

	@Override
	public AppendFile createNew(Path path) throws IOException {
		Files.createFile(path);
		return new Stream(new FileOutputStream(path.toFile(), true));
	}

	@Override
	public AppendFile createOrTruncate(Path path) throws IOException {
		return new Stream(new FileOutputStream(path.toFile(), false));
	}

	@Override
	public byte[] readAll(Path path) throws IOException {
		return Files.readAllBytes(path);
	}

	@Override
	public MemorySegment map(Path path, Arena arena) throws IOException {
		try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
			return channel.map(MapMode.READ_ONLY, 0, channel.size(), arena);
		}
	}

	@Override
	public void truncate(Path path, long length) throws IOException {
		try (FileChannel channel = FileChannel.open(path, StandardOpenOption.WRITE)) {
			channel.truncate(length);
			channel.force(true);
		}
	}

	@Override
	public void rename(Path from, Path to) throws IOException {
		Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
	}

	@Override
	public boolean deleteIfExists(Path path) throws IOException {
		return Files.deleteIfExists(path);
	}

	@Override
	public void syncDirectory(Path dir) throws IOException {
		try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
			channel.force(true);
		}
	}

	@Override
	public List<Path> list(Path dir) throws IOException {
		List<Path> files = new ArrayList<>();
		try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
			stream.forEach(files::add);
		}
		return files;
	}

	@Override
	public boolean exists(Path path) {
		return Files.exists(path);
	}

	private record Stream(FileOutputStream out) implements AppendFile {

		@Override
		public void write(byte[] bytes, int offset, int length) throws IOException {
			this.out.write(bytes, offset, length);
		}

		@Override
		public void sync() throws IOException {
			this.out.getFD().sync();
		}

		@Override
		public void close() throws IOException {
			this.out.close();
		}

	}

}
