package io.quorumkv.storage.lsm.io;

import java.io.IOException;
import java.nio.file.Path;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;

/**
 * Deliberately broken engines, for showing that a checker catches them: the engine's file
 * operations on matching files go wrong in one way, everything else goes to the layer
 * below.
 *
 * <ul>
 * <li>{@link #skipSyncOf}: the {@code fsync} is skipped (of the WAL: acknowledged writes
 * are not durable; of tables: the manifest names a table whose data is not);</li>
 * <li>{@link #ignoreWriteErrorsOf}: a failed write is taken for a success (the engine
 * acknowledges writes that never landed);</li>
 * <li>{@link #bufferWritesOf}: writes are buffered in the process (8 MiB) until the next
 * {@code fsync} or close: acknowledged writes die with the process. (With a small buffer
 * a kill just after it spilled could find only writes still in flight in it.)</li>
 * </ul>
 */
public final class BrokenIo extends ForwardingFileIo {

	private enum Defect {

		SKIP_SYNC, IGNORE_WRITE_ERRORS, BUFFER_WRITES

	}

	private final Pattern files;

	private final Defect defect;

	private BrokenIo(FileIo delegate, Pattern files, Defect defect) {
		super(delegate);
		this.files = files;
		this.defect = defect;
	}

	/** Syncs of files named like {@code regex} do nothing. */
	public static UnaryOperator<FileIo> skipSyncOf(String regex) {
		Pattern files = Pattern.compile(regex);
		return (io) -> new BrokenIo(io, files, Defect.SKIP_SYNC);
	}

	/** Failed writes to files named like {@code regex} look successful. */
	public static UnaryOperator<FileIo> ignoreWriteErrorsOf(String regex) {
		Pattern files = Pattern.compile(regex);
		return (io) -> new BrokenIo(io, files, Defect.IGNORE_WRITE_ERRORS);
	}

	/** Writes to files named like {@code regex} stay in the process until a sync. */
	public static UnaryOperator<FileIo> bufferWritesOf(String regex) {
		Pattern files = Pattern.compile(regex);
		return (io) -> new BrokenIo(io, files, Defect.BUFFER_WRITES);
	}

	private AppendFile wrap(Path path, AppendFile file) {
		if (!this.files.matcher(path.getFileName().toString()).matches()) {
			return file;
		}
		if (this.defect == Defect.BUFFER_WRITES) {
			return buffered(file);
		}
		Defect defect = this.defect;
		return new AppendFile() {

			@Override
			public void write(byte[] bytes, int offset, int length) throws IOException {
				try {
					file.write(bytes, offset, length);
				}
				catch (IOException ex) {
					if (defect != Defect.IGNORE_WRITE_ERRORS) {
						throw ex;
					}
				}
			}

			@Override
			public void sync() throws IOException {
				if (defect != Defect.SKIP_SYNC) {
					file.sync();
				}
			}

			@Override
			public void close() throws IOException {
				file.close();
			}

		};
	}

	private static AppendFile buffered(AppendFile file) {
		java.io.BufferedOutputStream buffer = new java.io.BufferedOutputStream(new java.io.OutputStream() {

			@Override
			public void write(int b) throws IOException {
				file.write(new byte[] { (byte) b }, 0, 1);
			}

			@Override
			public void write(byte[] bytes, int offset, int length) throws IOException {
				file.write(bytes, offset, length);
			}

		}, 8 << 20);
		return new AppendFile() {

			@Override
			public synchronized void write(byte[] bytes, int offset, int length) throws IOException {
				buffer.write(bytes, offset, length);
			}

			@Override
			public synchronized void sync() throws IOException {
				buffer.flush();
				file.sync();
			}

			@Override
			public synchronized void close() throws IOException {
				buffer.flush();
				file.close();
			}

		};
	}

	@Override
	public AppendFile createNew(Path path) throws IOException {
		return wrap(path, super.createNew(path));
	}

	@Override
	public AppendFile createOrTruncate(Path path) throws IOException {
		return wrap(path, super.createOrTruncate(path));
	}

}
