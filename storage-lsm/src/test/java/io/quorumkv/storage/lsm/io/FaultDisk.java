package io.quorumkv.storage.lsm.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import io.quorumkv.storage.lsm.io.FaultFileIo.Image;
import io.quorumkv.storage.lsm.io.FaultFileIo.Tear;
import org.jspecify.annotations.Nullable;

/**
 * The disk model of a {@link FaultFileIo}: the folder's files with their synced lengths,
 * its names as of the last folder sync, and the name changes since; files deleted or
 * replaced since that sync are kept aside in a {@code .trash} folder (which the engine
 * ignores) so that a crash image can bring them back. The files of its subfolders in
 * {@link #SUBFOLDERS} are modelled too, named {@code backups/000042.sst}; a folder's sync
 * makes its own names durable. A model of a whole tree ({@link FaultFileIo#tree}) takes
 * every file below the folder, at any depth, and folders renamed whole (a rename is a
 * name change of the folder it is in, as for a file). Folders themselves are not
 * modelled: an image has the folders of the files it keeps. Guarded by the layer's lock.
 */
final class FaultDisk {

	static final String TRASH = ".trash";

	/** The subfolders modelled with the folder: an LSM's incremental backups. */
	static final Set<String> SUBFOLDERS = Set.of("backups");

	final Path dir;

	/** Whether every file below {@link #dir} is modelled, not only its subfolders'. */
	private final boolean tree;

	private final Path trash;

	private final Map<String, Node> live = new HashMap<>();

	private Map<String, Node> durable;

	private final List<NameChange> log = new ArrayList<>();

	private long nextId;

	/**
	 * Takes over {@code dir} (created if missing); files already there count as durable.
	 */
	FaultDisk(Path dir, boolean tree) throws IOException {
		this.dir = dir.toAbsolutePath().normalize();
		this.tree = tree;
		this.trash = this.dir.resolve(TRASH);
		Files.createDirectories(this.trash);
		List<Path> folders = new ArrayList<>(List.of(this.dir));
		SUBFOLDERS.stream().map(this.dir::resolve).filter(Files::isDirectory).forEach(folders::add);
		if (tree) {
			folders.clear();
			try (Stream<Path> all = Files.walk(this.dir)) {
				all.filter(Files::isDirectory).filter((folder) -> !folder.startsWith(this.trash)).forEach(folders::add);
			}
		}
		for (Path folder : folders) {
			try (Stream<Path> files = Files.list(folder)) {
				for (Path file : files.filter(Files::isRegularFile).toList()) {
					Node node = new Node(this.nextId++, file);
					node.length = Files.size(file);
					node.synced = node.length;
					this.live.put(tracked(file), node);
				}
			}
		}
		this.durable = new HashMap<>(this.live);
	}

	/**
	 * The name of {@code path} in the folder ({@code backups/000042.sst} in a subfolder),
	 * or null outside it.
	 */
	@Nullable String tracked(Path path) {
		Path absolute = path.toAbsolutePath().normalize();
		if (this.tree) {
			return (absolute.startsWith(this.dir) && !absolute.equals(this.dir) && !absolute.startsWith(this.trash))
					? this.dir.relativize(absolute).toString().replace(java.io.File.separatorChar, '/') : null;
		}
		Path parent = absolute.getParent();
		if (this.dir.equals(parent)) {
			return absolute.getFileName().toString();
		}
		if (parent != null && this.dir.equals(parent.getParent())
				&& SUBFOLDERS.contains(parent.getFileName().toString())) {
			return parent.getFileName() + "/" + absolute.getFileName();
		}
		return null;
	}

	/**
	 * The folder of a name: "" for the folder itself, {@code "backups/"} for a subfolder.
	 */
	private static String folderOf(String name) {
		return name.substring(0, name.lastIndexOf('/') + 1);
	}

	/**
	 * The folder prefix of {@code folder} ({@link #folderOf}), or null when not modelled.
	 */
	@Nullable String folderName(Path folder) {
		Path absolute = folder.toAbsolutePath().normalize();
		if (this.dir.equals(absolute)) {
			return "";
		}
		if (this.tree) {
			String name = tracked(absolute);
			return (name != null) ? name + "/" : null;
		}
		return (this.dir.equals(absolute.getParent()) && SUBFOLDERS.contains(absolute.getFileName().toString()))
				? absolute.getFileName() + "/" : null;
	}

	@Nullable Node node(String name) {
		return this.live.get(name);
	}

	/** Creates an empty file, replacing one of the same name. */
	Node create(@Nullable String name, Path path) throws IOException {
		if (name != null && this.live.containsKey(name)) {
			discard(name);
		}
		Files.deleteIfExists(path);
		Files.createFile(path);
		Node node = new Node(this.nextId++, path);
		if (name != null) {
			this.live.put(name, node);
			this.log.add(new NameChange(null, name, node));
		}
		return node;
	}

	void rename(String source, String name, Path from, Path to) throws IOException {
		Node node = this.live.get(source);
		if (this.live.containsKey(name)) {
			discard(name);
		}
		Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
		node.location = to;
		this.live.remove(source);
		this.live.put(name, node);
		this.log.add(new NameChange(source, name, node));
	}

	/**
	 * Renames folder {@code source} (a tree's name of a folder, no trailing {@code /}) to
	 * {@code name}, with every file below it: one name change of the folder it is in.
	 */
	void renameFolder(String source, String name, Path from, Path to) throws IOException {
		if (!this.tree) {
			throw new IOException("a folder renamed outside a tree's model: " + from);
		}
		Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
		String prefix = source + "/";
		for (String old : List.copyOf(this.live.keySet())) {
			if (old.startsWith(prefix)) {
				Node node = this.live.remove(old);
				String rest = old.substring(prefix.length());
				node.location = to.resolve(rest);
				this.live.put(name + "/" + rest, node);
			}
		}
		this.log.add(new NameChange(source, name, null, true));
	}

	private static @Nullable String moved(@Nullable String name, String prefix, String to) {
		return (name != null && name.startsWith(prefix)) ? to + "/" + name.substring(prefix.length()) : name;
	}

	/** Moves every name below folder {@code source} below {@code name}. */
	private static void moveFolder(Map<String, Node> names, String source, String name) {
		String prefix = source + "/";
		for (String old : List.copyOf(names.keySet())) {
			if (old.startsWith(prefix)) {
				names.put(name + "/" + old.substring(prefix.length()), names.remove(old));
			}
		}
	}

	/**
	 * A second name for the file named {@code source} (a hard link): a file of its own in
	 * the model, with the source's bytes and durability, since what is linked (a table)
	 * is no longer written.
	 */
	void link(String source, String name, Path existing, Path link) throws IOException {
		Node from = this.live.get(source);
		Files.createLink(link, existing);
		Node node = new Node(this.nextId++, link);
		node.length = from.length;
		node.synced = from.synced;
		from.lost.forEach((range) -> node.lost.add(range.clone()));
		this.live.put(name, node);
		this.log.add(new NameChange(null, name, node));
	}

	boolean delete(String name) throws IOException {
		if (!this.live.containsKey(name)) {
			return false;
		}
		discard(name);
		this.log.add(new NameChange(name, null, null));
		return true;
	}

	/**
	 * The names of {@code folder} ({@link #folderName}) are durable as they are now; the
	 * files set aside that no image can bring back any more are deleted.
	 */
	void syncFolder(String folder) throws IOException {
		for (NameChange change : List.copyOf(this.log)) {
			if (change.folder() && folderOf(change.from()).equals(folder)) {
				moveFolder(this.durable, change.from(), change.to());
				// The changes still pending in the folder moved (the same folder, by
				// another name): they were logged under its old name.
				String prefix = change.from() + "/";
				this.log.replaceAll((c) -> (c == change) ? c : new NameChange(moved(c.from(), prefix, change.to()),
						moved(c.to(), prefix, change.to()), c.node(), c.folder()));
			}
		}
		this.durable.keySet().removeIf((name) -> folderOf(name).equals(folder));
		this.live.forEach((name, node) -> {
			if (folderOf(name).equals(folder)) {
				this.durable.put(name, node);
			}
		});
		this.log.removeIf((change) -> folderOf((change.from() != null) ? change.from() : change.to()).equals(folder));
		Set<Long> needed = new HashSet<>();
		this.durable.values().forEach((node) -> needed.add(node.id));
		this.log.stream().filter((change) -> change.node() != null).forEach((change) -> needed.add(change.node().id));
		try (Stream<Path> files = Files.list(this.trash)) {
			for (Path file : files.toList()) {
				String aside = file.getFileName().toString();
				if (!needed.contains(Long.parseLong(aside.substring(0, aside.indexOf('-'))))) {
					Files.delete(file);
				}
			}
		}
	}

	/** Moves a live file aside: an image may still need it. */
	private void discard(String name) throws IOException {
		Node node = this.live.remove(name);
		Path aside = this.trash.resolve(node.id + "-" + name.replace('/', '_'));
		Files.move(node.location, aside, StandardCopyOption.ATOMIC_MOVE);
		node.location = aside;
	}

	/**
	 * Writes what a power loss (or, with {@link Tear#KEEP_WRITTEN}, a process crash)
	 * leaves to {@code target}: the durable names plus a random prefix of the later
	 * changes (all of them when keeping what was written), each file cut at its synced
	 * length plus what {@code tear} keeps of the rest.
	 */
	Image cut(Tear tear, Path target, SplittableRandom random) throws IOException {
		long at = System.nanoTime();
		Map<String, Node> names = new HashMap<>(this.durable);
		int kept = (tear == Tear.KEEP_WRITTEN) ? this.log.size() : random.nextInt(this.log.size() + 1);
		for (NameChange change : this.log.subList(0, kept)) {
			if (change.folder()) {
				moveFolder(names, change.from(), change.to());
				continue;
			}
			Node node = (change.from() != null) ? names.remove(change.from()) : change.node();
			if (change.to() != null && node != null) {
				names.put(change.to(), node);
			}
		}
		Files.createDirectories(target);
		long dropped = 0;
		for (Map.Entry<String, Node> e : names.entrySet()) {
			Node node = e.getValue();
			long unsynced = node.length - node.synced;
			long keep = switch (tear) {
				case DROP_UNSYNCED -> 0;
				case TORN_PREFIX, TORN_PREFIX_THEN_ZEROS -> (long) (random.nextDouble() * (unsynced + 1));
				case KEEP_WRITTEN -> unsynced;
			};
			long zeros = (tear == Tear.TORN_PREFIX_THEN_ZEROS) ? (long) (random.nextDouble() * (unsynced - keep)) : 0;
			dropped += unsynced - keep;
			byte[] bytes = new byte[(int) (node.synced + keep + zeros)];
			try (FileChannel in = FileChannel.open(node.location, StandardOpenOption.READ)) {
				in.read(ByteBuffer.wrap(bytes, 0, (int) (node.synced + keep)), 0);
			}
			dropped += node.zeroLost(bytes);
			Path file = target.resolve(e.getKey());
			Files.createDirectories(file.getParent());
			Files.write(file, bytes);
		}
		return new Image(target, names.size(), dropped, this.log.size() - kept, at);
	}

	/**
	 * A file's bytes and what of them is durable: its first {@code synced} bytes, except
	 * the ranges a failed {@code fsync} dropped.
	 */
	static final class Node {

		final long id;

		Path location;

		long length;

		long synced;

		/**
		 * Byte ranges {@code [from, to)} that were unsynced when an {@code fsync} of the
		 * file failed: the kernel dropped their dirty pages (marked them clean), so they
		 * are lost from the disk, and a later {@code fsync} that succeeds does not bring
		 * them back. A crash image holds zeros there (blocks allocated, never written).
		 */
		private final List<long[]> lost = new ArrayList<>();

		Node(long id, Path location) {
			this.id = id;
			this.location = location;
		}

		/** An {@code fsync} of this file failed: its unsynced bytes are lost. */
		void dropUnsynced() {
			if (this.length > this.synced) {
				this.lost.add(new long[] { this.synced, this.length });
			}
		}

		/** Cut to {@code length} bytes (and forced). */
		void truncate(long length) {
			this.length = length;
			this.synced = length;
			this.lost.removeIf((range) -> range[0] >= length);
			for (long[] range : this.lost) {
				range[1] = Math.min(range[1], length);
			}
		}

		/**
		 * Zeros the lost ranges in an image's {@code bytes}; how many bytes it zeroed.
		 */
		long zeroLost(byte[] bytes) {
			long zeroed = 0;
			for (long[] range : this.lost) {
				int from = (int) Math.min(range[0], bytes.length);
				int to = (int) Math.min(range[1], bytes.length);
				Arrays.fill(bytes, from, to, (byte) 0);
				zeroed += to - from;
			}
			return zeroed;
		}

	}

	/**
	 * A creation (from null), rename or deletion (to null) since the last folder sync.
	 */
	private record NameChange(@Nullable String from, @Nullable String to, @Nullable Node node, boolean folder) {

		NameChange(@Nullable String from, @Nullable String to, @Nullable Node node) {
			this(from, to, node, false);
		}

	}

}
