package io.quorumkv.storage.derby;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * A Derby snapshot: {@code SYSCS_UTIL.SYSCS_BACKUP_DATABASE}, Derby's online backup, a
 * copy of the database folder (its data and log files, consistent as of the backup's
 * start) made while the store serves, in {@code <target>/<database folder name>}. Reading
 * it back copies that folder into a folder of its own and boots it there (Derby writes
 * into a database it boots).
 */
final class DerbySnapshots {

	/** The format name of a Derby snapshot. */
	static final String FORMAT = "derby-backup";

	private DerbySnapshots() {
	}

	/**
	 * Backs the database up into {@code target}.
	 * @return the files written, relative to {@code target}
	 */
	static List<String> backup(Connection connection, Path target) throws SQLException, IOException {
		try (CallableStatement call = connection.prepareCall("CALL SYSCS_UTIL.SYSCS_BACKUP_DATABASE(?)")) {
			call.setString(1, target.toAbsolutePath().toString());
			call.execute();
		}
		List<String> files = new ArrayList<>();
		try (Stream<Path> all = Files.walk(target)) {
			for (Path file : all.filter(Files::isRegularFile).sorted().toList()) {
				files.add(target.relativize(file).toString().replace(java.io.File.separatorChar, '/'));
			}
		}
		return files;
	}

	/** Copies the backup in {@code snapshot} into {@code workDir} as its database. */
	static void copy(Path snapshot, DerbyStorageOptions options) throws IOException {
		Path from = snapshot.resolve(options.databaseDir().getFileName().toString());
		if (!Files.isDirectory(from)) {
			throw new IOException("no Derby backup " + from);
		}
		Path to = options.databaseDir();
		try (Stream<Path> all = Files.walk(from)) {
			for (Path file : all.toList()) {
				Path target = to.resolve(from.relativize(file).toString());
				if (Files.isDirectory(file)) {
					Files.createDirectories(target);
				}
				else {
					Files.copy(file, target);
				}
			}
		}
	}

}
