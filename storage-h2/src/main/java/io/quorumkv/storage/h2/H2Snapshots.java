package io.quorumkv.storage.h2;

import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

import reactor.core.publisher.Mono;

import org.springframework.r2dbc.core.DatabaseClient;

/**
 * An H2 snapshot: {@code BACKUP TO 'quorumkv-h2.zip'}, H2's online backup, a zip of the
 * database file as of one commit, taken while the store serves; the zip is forced once
 * written. Reading it back unzips it into a folder of its own.
 */
final class H2Snapshots {

	/** The file of an H2 snapshot. */
	static final String FILE = "quorumkv-h2.zip";

	/** The format name of an H2 snapshot. */
	static final String FORMAT = "h2-backup";

	private H2Snapshots() {
	}

	/** Backs the database up into {@code target/quorumkv-h2.zip}. */
	static Mono<List<String>> backup(DatabaseClient client, Path target) {
		Path zip = target.toAbsolutePath().resolve(FILE);
		String sql = "BACKUP TO '" + zip.toString().replace("'", "''") + "'";
		return client.sql(sql).then().then(Mono.fromCallable(() -> {
			try (FileChannel file = FileChannel.open(zip, StandardOpenOption.WRITE)) {
				file.force(true);
			}
			return List.of(FILE);
		}));
	}

	/** Unzips the snapshot in {@code snapshot} into {@code workDir}. */
	static void unzip(Path snapshot, Path workDir) throws IOException {
		Path root = workDir.toAbsolutePath().normalize();
		try (InputStream in = Files.newInputStream(snapshot.resolve(FILE));
				ZipInputStream zip = new ZipInputStream(in)) {
			ZipEntry entry;
			while ((entry = zip.getNextEntry()) != null) {
				Path file = root.resolve(entry.getName()).normalize();
				if (!file.startsWith(root)) {
					throw new IOException("zip entry outside its folder: " + entry.getName());
				}
				if (entry.isDirectory()) {
					Files.createDirectories(file);
				}
				else {
					Files.createDirectories(file.getParent());
					Files.copy(zip, file);
				}
			}
		}
	}

}
