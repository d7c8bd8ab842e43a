package io.quorumkv.service.replication;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import io.quorumkv.service.support.FaultFolders;
import io.quorumkv.storage.lsm.io.AppendFile;
import io.quorumkv.storage.lsm.io.FaultFileIo;
import io.quorumkv.storage.lsm.io.FaultFileIo.Image;
import io.quorumkv.storage.lsm.io.FaultFileIo.Tear;
import io.quorumkv.storage.lsm.io.FileIo;

/**
 * The disks of one node's LSM stores, its data ({@code <path>/data}) and its hints
 * ({@code <path>/hints}), each under a {@link FaultFileIo} of its own: the node's
 * {@link FileIo} bean routes every operation to the layer of the folder it touches (the
 * engine keeps every file of a store directly in its folder). A power cut freezes both
 * layers (every later operation fails, so nothing more reaches them) and writes what each
 * disk keeps to an image; once the node is stopped, {@link #restore} puts the images in
 * the folders' place for the restart.
 */
final class NodeDisks implements FileIo {

	/** The node's LSM folders under its storage path. */
	static final List<String> FOLDERS = List.of("data", "hints");

	private final Map<Path, FaultFileIo> layers;

	private final List<Image> images = new ArrayList<>();

	NodeDisks(Path storagePath, long seed) {
		SplittableRandom seeds = new SplittableRandom(seed);
		this.layers = FOLDERS.stream()
			.map((name) -> storagePath.resolve(name).toAbsolutePath().normalize())
			.collect(java.util.stream.Collectors.toUnmodifiableMap((dir) -> dir,
					(dir) -> new FaultFileIo(dir, seeds.nextLong())));
	}

	/**
	 * Cuts the power of both disks, each keeping its synced bytes and what {@code tear}
	 * keeps of the rest; the images go beside the folders.
	 */
	List<Image> cut(Tear tear) {
		for (FaultFileIo layer : this.layers.values()) {
			Path dir = layer.dir();
			this.images.add(layer.powerLoss(tear, dir.resolveSibling(dir.getFileName() + ".image")));
		}
		return List.copyOf(this.images);
	}

	/** Replaces each folder by its image; the node must be stopped. */
	void restore() throws IOException {
		for (Image image : this.images) {
			Path dir = image.folder().resolveSibling(image.folder().getFileName().toString().replace(".image", ""));
			FaultFolders.delete(dir);
			if (Files.exists(dir)) {
				throw new IOException("could not delete " + dir + " to put its crash image in its place");
			}
			Files.move(image.folder(), dir);
		}
	}

	private FaultFileIo layer(Path folder) throws IOException {
		FaultFileIo layer = this.layers.get(folder.toAbsolutePath().normalize());
		if (layer == null) {
			throw new IOException("no fault layer for " + folder + " (the node's LSM folders are " + FOLDERS + ")");
		}
		return layer;
	}

	private FaultFileIo fileLayer(Path file) throws IOException {
		Path parent = file.toAbsolutePath().normalize().getParent();
		if (parent == null) {
			throw new IOException("no folder for " + file);
		}
		return layer(parent);
	}

	@Override
	public AppendFile createNew(Path path) throws IOException {
		return fileLayer(path).createNew(path);
	}

	@Override
	public AppendFile createOrTruncate(Path path) throws IOException {
		return fileLayer(path).createOrTruncate(path);
	}

	@Override
	public byte[] readAll(Path path) throws IOException {
		return fileLayer(path).readAll(path);
	}

	@Override
	public MemorySegment map(Path path, Arena arena) throws IOException {
		return fileLayer(path).map(path, arena);
	}

	@Override
	public void truncate(Path path, long length) throws IOException {
		fileLayer(path).truncate(path, length);
	}

	@Override
	public void rename(Path from, Path to) throws IOException {
		fileLayer(to).rename(from, to);
	}

	@Override
	public boolean deleteIfExists(Path path) throws IOException {
		return fileLayer(path).deleteIfExists(path);
	}

	@Override
	public void syncDirectory(Path dir) throws IOException {
		layer(dir).syncDirectory(dir);
	}

	@Override
	public List<Path> list(Path dir) throws IOException {
		return layer(dir).list(dir);
	}

	@Override
	public boolean exists(Path path) {
		return Files.exists(path);
	}

}
