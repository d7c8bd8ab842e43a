package io.quorumkv.storage.derby;

import java.io.IOException;
import java.io.OutputStream;
import java.io.SyncFailedException;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.derby.impl.io.DirStorageFactory;
import org.apache.derby.io.StorageFile;
import org.apache.derby.io.StorageRandomAccessFile;
import org.apache.derby.io.WritableStorageFactory;

/**
 * Derby's own file layer ({@code DirStorageFactory}) under a sub-sub-protocol of its own
 * ({@code jdbc:derby:qkvfail:...}, registered by {@link #register()}), whose writes and
 * {@code sync}s of the transaction log ({@code log/*.dat}) fail while armed: to see what
 * Derby does after a failed write or {@code fsync} of its log. The switches are global: a
 * test arms them only while it alone runs statements on its database.
 */
public final class FailingStorageFactory implements WritableStorageFactory {

	static final String PROTOCOL = "qkvfail";

	static volatile boolean failLogWrites;

	static volatile boolean failLogSyncs;

	/** Calls of {@code sync} on a log file, failed or not. */
	static final AtomicLong logSyncs = new AtomicLong();

	private final DirStorageFactory base = new DirStorageFactory();

	/** Derby creates the factory by reflection: public, with a public constructor. */
	public FailingStorageFactory() {
	}

	static void register() {
		System.setProperty("derby.subSubProtocol." + PROTOCOL, FailingStorageFactory.class.getName());
	}

	static void disarm() {
		failLogWrites = false;
		failLogSyncs = false;
		logSyncs.set(0);
	}

	@Override
	public void init(String home, String databaseName, String tempDirName, String uniqueName) throws IOException {
		this.base.init(home, databaseName, tempDirName, uniqueName);
	}

	@Override
	public void shutdown() {
		this.base.shutdown();
	}

	@Override
	public String getCanonicalName() throws IOException {
		return this.base.getCanonicalName();
	}

	@Override
	public void setCanonicalName(String name) {
		this.base.setCanonicalName(name);
	}

	@Override
	public StorageFile newStorageFile(String path) {
		return wrap(this.base.newStorageFile(path));
	}

	@Override
	public StorageFile newStorageFile(String directoryName, String fileName) {
		return wrap(this.base.newStorageFile(directoryName, fileName));
	}

	@Override
	public StorageFile newStorageFile(StorageFile directory, String fileName) {
		return wrap(this.base.newStorageFile(unwrap(directory), fileName));
	}

	@Override
	public char getSeparator() {
		return this.base.getSeparator();
	}

	@Override
	public StorageFile getTempDir() {
		return wrap(this.base.getTempDir());
	}

	@Override
	public boolean isFast() {
		return this.base.isFast();
	}

	@Override
	public boolean isReadOnlyDatabase() {
		return this.base.isReadOnlyDatabase();
	}

	@Override
	public boolean supportsRandomAccess() {
		return this.base.supportsRandomAccess();
	}

	@Override
	public int getStorageFactoryVersion() {
		return this.base.getStorageFactoryVersion();
	}

	@Override
	public StorageFile createTemporaryFile(String prefix, String suffix) throws IOException {
		return wrap(this.base.createTemporaryFile(prefix, suffix));
	}

	@Override
	public void sync(OutputStream stream, boolean metaData) throws IOException, SyncFailedException {
		this.base.sync(stream, metaData);
	}

	@Override
	public boolean supportsWriteSync() {
		return this.base.supportsWriteSync();
	}

	private static boolean isLog(StorageFile file) {
		String path = file.getPath().replace('\\', '/');
		return path.contains("/log/") && path.endsWith(".dat");
	}

	private static StorageFile wrap(StorageFile file) {
		if (file == null || Proxy.isProxyClass(file.getClass())) {
			return file;
		}
		return (StorageFile) Proxy.newProxyInstance(StorageFile.class.getClassLoader(),
				new Class<?>[] { StorageFile.class }, new FileHandler(file));
	}

	private static Object unwrapArgument(Object argument) {
		return (argument instanceof StorageFile file) ? unwrap(file) : argument;
	}

	private static StorageFile unwrap(StorageFile file) {
		if (file != null && Proxy.isProxyClass(file.getClass())
				&& Proxy.getInvocationHandler(file) instanceof FileHandler handler) {
			return handler.file;
		}
		return file;
	}

	private static Object call(Object target, Method method, Object[] args) throws Throwable {
		Object[] unwrapped = (args == null) ? null : new Object[args.length];
		for (int i = 0; args != null && i < args.length; i++) {
			unwrapped[i] = unwrapArgument(args[i]);
		}
		try {
			return method.invoke(target, unwrapped);
		}
		catch (InvocationTargetException ex) {
			throw ex.getCause();
		}
	}

	/** A file: its random-access handles of a log file fail while armed. */
	private record FileHandler(StorageFile file) implements InvocationHandler {

		@Override
		public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
			Object result = call(this.file, method, args);
			if (result instanceof StorageFile f) {
				return wrap(f);
			}
			if (result instanceof StorageRandomAccessFile raf && isLog(this.file)) {
				return Proxy.newProxyInstance(StorageRandomAccessFile.class.getClassLoader(),
						new Class<?>[] { StorageRandomAccessFile.class }, new LogFileHandler(raf));
			}
			return result;
		}

	}

	/** A log file open for random access: writes and syncs fail while armed. */
	private record LogFileHandler(StorageRandomAccessFile file) implements InvocationHandler {

		@Override
		public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
			String name = method.getName();
			if (failLogWrites && (name.startsWith("write") || name.equals("setLength"))) {
				throw new IOException("injected log write failure");
			}
			if (name.equals("sync")) {
				logSyncs.incrementAndGet();
				if (failLogSyncs) {
					throw new SyncFailedException("injected log sync failure");
				}
			}
			Object result = call(this.file, method, args);
			if (result instanceof StorageRandomAccessFile raf && name.equals("clone")) {
				return Proxy.newProxyInstance(StorageRandomAccessFile.class.getClassLoader(),
						new Class<?>[] { StorageRandomAccessFile.class }, new LogFileHandler(raf));
			}
			return result;
		}

	}

}
