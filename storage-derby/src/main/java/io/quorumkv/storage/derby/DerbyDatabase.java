package io.quorumkv.storage.derby;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import io.quorumkv.storage.StorageException;
import io.quorumkv.storage.derby.DerbyStorageOptions.Durability;
import org.jspecify.annotations.Nullable;

/**
 * Boots and shuts down one embedded Derby database, {@code
 *
<dir>
 * /derby}.
 *
 * <p>
 * Derby's engine is JVM-global: several stores in one JVM share one engine, one
 * {@code derby.log} and its system-wide properties. Per-database settings that Derby only
 * reads as system properties ({@code derby.system.durability},
 * {@code derby.storage.pageCacheSize}) are therefore set just around the boot, under one
 * JVM-wide lock, and restored afterwards; Derby reads both only while booting a database.
 * {@code derby.stream.error.file} is read once when the engine starts, so the first store
 * of the JVM decides where {@code derby.log} goes (unless the operator set it). A
 * database folder can be open only once per JVM.
 */
final class DerbyDatabase {

	private static final Object BOOT_LOCK = new Object();

	private static final Set<Path> OPEN = new HashSet<>();

	private static final String DURABILITY = "derby.system.durability";

	private static final String PAGE_CACHE = "derby.storage.pageCacheSize";

	private static final String ERROR_FILE = "derby.stream.error.file";

	private final DerbyStorageOptions options;

	private final String url;

	private DerbyDatabase(DerbyStorageOptions options) {
		this.options = options;
		this.url = "jdbc:derby:" + options.databaseDir();
	}

	/** Creates (when absent) and boots the database, then creates the schema. */
	static DerbyDatabase boot(DerbyStorageOptions options) {
		DerbyDatabase database = new DerbyDatabase(options);
		synchronized (BOOT_LOCK) {
			if (!OPEN.add(options.databaseDir())) {
				throw new StorageException("derby database " + options.databaseDir() + " is already open in this JVM");
			}
			try {
				Files.createDirectories(options.dir());
				if (System.getProperty(ERROR_FILE) == null) {
					System.setProperty(ERROR_FILE, options.dir().resolve("derby.log").toString());
				}
				String durability = (options.durability() == Durability.NO_SYNC) ? "test" : null;
				try (Restorer restore = new Restorer(List.of(DURABILITY, PAGE_CACHE))) {
					restore.set(DURABILITY, durability).set(PAGE_CACHE, options.pageCacheSize());
					try (Connection connection = DriverManager.getConnection(database.url + ";create=true")) {
						EntryTable.createIfAbsent(connection);
					}
				}
			}
			catch (SQLException | IOException | RuntimeException ex) {
				database.shutdownAfterFailedBoot();
				OPEN.remove(options.databaseDir());
				throw (ex instanceof StorageException se) ? se
						: new StorageException("cannot open derby database " + options.databaseDir() + ": " + ex, ex);
			}
		}
		return database;
	}

	/** Leaves no half-opened database booted in the engine (it may not be booted). */
	private void shutdownAfterFailedBoot() {
		try {
			DriverManager.getConnection(this.url + ";shutdown=true").close();
		}
		catch (SQLException ex) {
			// 08006 when it was booted; anything else: it was not, nothing to undo
		}
	}

	/** The JDBC URL of the booted database (no attributes). */
	String url() {
		return this.url;
	}

	/**
	 * Shuts the database down (a checkpoint, then the files are closed) so that it can be
	 * booted again in this JVM. The engine stays up for other stores.
	 */
	void shutdown() {
		try {
			DriverManager.getConnection(this.url + ";shutdown=true").close();
			throw new StorageException("derby database " + this.url + " did not confirm its shutdown");
		}
		catch (SQLException ex) {
			// 08006: the database was shut down, which Derby reports as an exception.
			if (!"08006".equals(ex.getSQLState())) {
				throw SqlFailures.toStorageException("shut down the database", ex);
			}
		}
		finally {
			synchronized (BOOT_LOCK) {
				OPEN.remove(this.options.databaseDir());
			}
		}
		if (this.options.durability() == Durability.NO_SYNC) {
			forceFiles();
		}
	}

	/**
	 * Forces every file and folder of the database folder to disk. With
	 * {@link Durability#NO_SYNC} Derby never does, so {@code flush()} and {@code close()}
	 * do it after a checkpoint. On Linux an {@code fsync} through any descriptor flushes
	 * the file's dirty pages.
	 */
	void forceFiles() {
		try (Stream<Path> paths = Files.walk(this.options.databaseDir())) {
			for (Path path : (Iterable<Path>) paths::iterator) {
				force(path);
			}
		}
		catch (IOException | java.io.UncheckedIOException ex) {
			throw new StorageException("cannot force derby files to disk in " + this.options.databaseDir() + ": " + ex,
					ex);
		}
	}

	private static void force(Path path) throws IOException {
		try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
			channel.force(true);
		}
		catch (java.nio.file.NoSuchFileException ex) {
			// a log file removed by a checkpoint meanwhile: nothing to force
		}
		catch (IOException ex) {
			// Folders are forced too (they hold new log files' entries) where the
			// platform
			// can open them; only files must succeed.
			if (!Files.isDirectory(path)) {
				throw ex;
			}
		}
	}

	/**
	 * Sets system properties for the boot and restores their previous values on close.
	 */
	private static final class Restorer implements AutoCloseable {

		private final List<String> names;

		private final String[] previous;

		Restorer(List<String> names) {
			this.names = names;
			this.previous = names.stream().map(System::getProperty).toArray(String[]::new);
		}

		Restorer set(String name, @Nullable Object value) {
			if (value == null) {
				System.clearProperty(name);
			}
			else {
				System.setProperty(name, value.toString());
			}
			return this;
		}

		@Override
		public void close() {
			for (int i = 0; i < this.names.size(); i++) {
				set(this.names.get(i), this.previous[i]);
			}
		}

	}

}
