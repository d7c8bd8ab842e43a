package io.quorumkv.service.backup;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import io.quorumkv.storage.lsm.IncrementalBackup;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The folders of a node's snapshots: removing them, and the half-made ones at start; and
 * the check that every file of a folder of links has its record.
 */
final class SnapshotFiles {

	private static final Log logger = LogFactory.getLog(NodeSnapshots.class);

	private SnapshotFiles() {
	}

	/**
	 * Removes the snapshots that never finished (the node stopped while taking one: their
	 * folders still end in {@link NodeSnapshots#PARTIAL_SUFFIX}); their names.
	 */
	static List<String> removePartials(Path root) {
		List<String> removed = new ArrayList<>();
		if (!Files.isDirectory(root)) {
			return removed;
		}
		try (DirectoryStream<Path> folders = Files.newDirectoryStream(root, "*" + NodeSnapshots.PARTIAL_SUFFIX)) {
			for (Path folder : folders) {
				String name = folder.getFileName().toString();
				logger
					.warn("Removing " + folder + ": a snapshot that never finished (the node stopped while taking it)");
				deleteTree(folder);
				removed.add(name.substring(1, name.length() - NodeSnapshots.PARTIAL_SUFFIX.length()));
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException("could not list " + root, ex);
		}
		return List.copyOf(removed);
	}

	/**
	 * Checks that every file of {@code folder} is one of {@code recorded} (the files the
	 * records name), a record itself or a link or record still being written
	 * ({@code .tmp}: the node renames it when done); its subfolders are not looked at.
	 * @param kind what a recorded file is, for the message ("an incremental table")
	 * @throws SnapshotException naming the first file without a record
	 */
	static void checkEveryFileRecorded(Path folder, Set<String> recorded, String kind) {
		try (Stream<Path> files = Files.list(folder)) {
			for (Path file : files.toList()) {
				String name = file.getFileName().toString();
				if (name.endsWith(".tmp") || name.endsWith(IncrementalBackup.RECORD_SUFFIX)
						|| Files.isDirectory(file)) {
					continue;
				}
				if (!recorded.contains(name)) {
					throw new SnapshotException("file " + file + " has no record (" + name
							+ IncrementalBackup.RECORD_SUFFIX + "): not " + kind + ", or one whose link failed");
				}
			}
		}
		catch (IOException ex) {
			throw new SnapshotException("cannot list " + folder + ": " + ex.getMessage(), ex);
		}
	}

	static void deleteTree(Path dir) {
		if (!Files.exists(dir)) {
			return;
		}
		try (Stream<Path> files = Files.walk(dir)) {
			for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
				Files.deleteIfExists(p);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException("could not delete " + dir, ex);
		}
	}

}
