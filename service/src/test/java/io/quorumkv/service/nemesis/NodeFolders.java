package io.quorumkv.service.nemesis;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.stream.Stream;

import io.quorumkv.service.support.FaultFolders;

/**
 * The nodes' data folders: each on a tmpfs of its own when asked and permitted (so that
 * one node's disk can be filled), copied aside and restored (restarts from an older
 * copy). Every method that touches a folder expects its node stopped.
 */
final class NodeFolders implements AutoCloseable {

	private final Path root;

	private final boolean[] mounted;

	NodeFolders(Path root, int size, boolean tmpfs) {
		this.root = root;
		this.mounted = new boolean[size];
		if (!tmpfs) {
			return;
		}
		try {
			for (int node = 0; node < size; node++) {
				Path mount = Files.createDirectories(root.resolve("tmpfs" + node));
				this.mounted[node] = Sh.run("mount", "-t", "tmpfs", "-o", "size=96m", "tmpfs", mount.toString()).ok();
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		System.out.println("Nemesis disks: " + (canFill() ? "a 96 MiB tmpfs per node"
				: "cannot mount a tmpfs here (needs root): full-disk faults disabled"));
	}

	boolean canFill() {
		for (boolean m : this.mounted) {
			if (!m) {
				return false;
			}
		}
		return this.mounted.length > 0;
	}

	Path data(int node) {
		return this.mounted[node] ? this.root.resolve("tmpfs" + node).resolve("node")
				: this.root.resolve("node" + node);
	}

	/** Copies a stopped node's data folder aside (crash-consistent after a SIGKILL). */
	void snapshot(int node) {
		Path copy = snapshotFolder(node);
		FaultFolders.delete(copy);
		copyTree(data(node), copy);
	}

	boolean hasSnapshot(int node) {
		return Files.isDirectory(snapshotFolder(node));
	}

	/** Replaces a stopped node's data folder with its older copy. */
	void restoreSnapshot(int node) {
		Path data = data(node);
		try (Stream<Path> children = Files.list(data)) {
			children.forEach(FaultFolders::delete);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		copyTree(snapshotFolder(node), data);
	}

	/**
	 * Deletes a stopped node's data folder and its older copy: it starts again as a new
	 * node.
	 */
	void wipe(int node) {
		FaultFolders.delete(data(node));
		FaultFolders.delete(snapshotFolder(node));
	}

	/** Fills the node's tmpfs with a balloon file until no space is left. */
	long fill(int node) {
		byte[] chunk = new byte[1 << 20];
		long written = 0;
		try (OutputStream out = Files.newOutputStream(balloon(node))) {
			for (int i = 0; i < 256; i++) {
				out.write(chunk);
				written += chunk.length;
			}
		}
		catch (IOException ex) {
			// no space left: what we wanted
		}
		return written;
	}

	void free(int node) {
		try {
			Files.deleteIfExists(balloon(node));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private Path balloon(int node) {
		return this.root.resolve("tmpfs" + node).resolve("balloon");
	}

	private Path snapshotFolder(int node) {
		return this.root.resolve("snapshot" + node);
	}

	private static void copyTree(Path from, Path to) {
		try (Stream<Path> paths = Files.walk(from)) {
			for (Path path : (Iterable<Path>) paths::iterator) {
				Path target = to.resolve(from.relativize(path).toString());
				if (Files.isDirectory(path)) {
					Files.createDirectories(target);
				}
				else {
					Files.copy(path, target, StandardCopyOption.REPLACE_EXISTING);
				}
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** Unmounts the tmpfs folders (lazily: a process may still hold a file). */
	@Override
	public void close() {
		for (int node = 0; node < this.mounted.length; node++) {
			if (this.mounted[node]) {
				Sh.run("umount", "-l", this.root.resolve("tmpfs" + node).toString());
				this.mounted[node] = false;
			}
		}
	}

}
