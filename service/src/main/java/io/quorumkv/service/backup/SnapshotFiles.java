package io.quorumkv.service.backup;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/** The folders of a node's snapshots: removing them, and the half-made ones at start. */
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
