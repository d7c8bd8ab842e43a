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
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import io.quorumkv.storage.lsm.io.FaultFileIo.Image;
import io.quorumkv.storage.lsm.io.FaultFileIo.Tear;
import org.jspecify.annotations.Nullable;

/**
 * The disk model of a {@link FaultFileIo}: the folder's files with their synced lengths,
 * its names as of the last folder sync, and the name changes since; files deleted or
 * replaced since that sync are kept aside in a {@code .trash} folder (which the engine
 * ignores) so that a crash image can bring them back. Guarded by the layer's lock.
 */
final class FaultDisk {

	static final String TRASH = ".trash";

	final Path dir;

	private final Path trash;

	private final Map<String, Node> live = new HashMap<>();

	private Map<String, Node> durable;

	private final List<NameChange> log = new ArrayList<>();

	private long nextId;

	/**
	 * Takes over {@code dir} (created if missing); files already there count as durable.
	 */
	FaultDisk(Path dir) throws IOException {
		this.dir = dir.toAbsolutePath().normalize();
		this.trash = this.dir.resolve(TRASH);
		Files.createDirectories(this.trash);
		try (Stream<Path> files = Files.list(this.dir)) {
			for (Path file : files.filter(Files::isRegularFile).toList()) {
				Node node = new Node(this.nextId++, file);
				node.length = Files.size(file);
				node.synced = node.length;
				this.live.put(file.getFileName().toString(), node);
			}
		}
		this.durable = new HashMap<>(this.live);
	}

	/** The name of {@code path} in the folder, or null outside it. */
	@Nullable String tracked(Path path) {
		Path absolute = path.toAbsolutePath().normalize();
		return this.dir.equals(absolute.getParent()) ? absolute.getFileName().toString() : null;
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

	boolean delete(String name) throws IOException {
		if (!this.live.containsKey(name)) {
			return false;
		}
		discard(name);
		this.log.add(new NameChange(name, null, null));
		return true;
	}

	/** The folder's names are durable as they are now. */
	void syncFolder() throws IOException {
		this.durable = new HashMap<>(this.live);
		this.log.clear();
		try (Stream<Path> files = Files.list(this.trash)) {
			for (Path file : files.toList()) {
				Files.delete(file);
			}
		}
	}

	/** Moves a live file aside: an image may still need it. */
	private void discard(String name) throws IOException {
		Node node = this.live.remove(name);
		Path aside = this.trash.resolve(node.id + "-" + name);
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
			Files.write(target.resolve(e.getKey()), bytes);
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
	private record NameChange(@Nullable String from, @Nullable String to, @Nullable Node node) {
	}

}
