package io.quorumkv.storage.h2;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;

import org.h2.store.fs.FileBase;
import org.h2.store.fs.FilePath;
import org.h2.store.fs.FilePathWrapper;

/**
 * An H2 file system ({@code qkvfail:} in a database URL) over the real one whose writes
 * or {@code fsync}s ({@link FileChannel#force}) fail while armed: to see what H2 does
 * after a failed write or {@code fsync} of its MVStore file. Registered with H2 by
 * {@link #register()}; the switches are global, so a test arms them for its own database
 * only while it alone runs statements on it.
 */
public final class FailingFilePath extends FilePathWrapper {

	static final String SCHEME = "qkvfail";

	static volatile boolean failWrites;

	static volatile boolean failSyncs;

	/** H2 creates each path by reflection: public, with a public constructor. */
	public FailingFilePath() {
	}

	static void register() {
		FilePath.register(new FailingFilePath());
	}

	static void disarm() {
		failWrites = false;
		failSyncs = false;
	}

	@Override
	public String getScheme() {
		return SCHEME;
	}

	@Override
	public FileChannel open(String mode) throws IOException {
		return new Channel(getBase().open(mode));
	}

	/** Delegates to the real channel, failing writes or forces while armed. */
	private static final class Channel extends FileBase {

		private final FileChannel base;

		Channel(FileChannel base) {
			this.base = base;
		}

		@Override
		public long position() throws IOException {
			return this.base.position();
		}

		@Override
		public FileChannel position(long newPosition) throws IOException {
			this.base.position(newPosition);
			return this;
		}

		@Override
		public int read(ByteBuffer dst) throws IOException {
			return this.base.read(dst);
		}

		@Override
		public int read(ByteBuffer dst, long position) throws IOException {
			return this.base.read(dst, position);
		}

		@Override
		public int write(ByteBuffer src) throws IOException {
			checkWrite();
			return this.base.write(src);
		}

		@Override
		public int write(ByteBuffer src, long position) throws IOException {
			checkWrite();
			return this.base.write(src, position);
		}

		private static void checkWrite() throws IOException {
			if (failWrites) {
				throw new IOException("injected write failure");
			}
		}

		@Override
		public long size() throws IOException {
			return this.base.size();
		}

		@Override
		public FileChannel truncate(long size) throws IOException {
			checkWrite();
			this.base.truncate(size);
			return this;
		}

		@Override
		public void force(boolean metaData) throws IOException {
			if (failSyncs) {
				throw new IOException("injected fsync failure");
			}
			this.base.force(metaData);
		}

		@Override
		public FileLock tryLock(long position, long size, boolean shared) throws IOException {
			return this.base.tryLock(position, size, shared);
		}

		@Override
		protected void implCloseChannel() throws IOException {
			this.base.close();
		}

	}

}
