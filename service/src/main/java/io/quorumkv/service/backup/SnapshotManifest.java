package io.quorumkv.service.backup;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

import io.quorumkv.storage.lsm.IncrementalBackup;
import io.quorumkv.storage.lsm.io.AppendFile;
import io.quorumkv.storage.lsm.io.FileIo;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A node snapshot's {@code snapshot.json}: what the snapshot is (its name, the node, the
 * ring it served under, the backend's format) and every file of it with its size and
 * CRC32C, so that a copy can be checked file by file.
 *
 * <pre>
 * {"version": 1, "name": "s1", "node": "node1", "url": "http://…", "backend": "lsm",
 *  "format": "lsm", "asOf": T, "createdAt": epoch-millis, "ring": {…},
 *  "files": [{"path": "data/000012.sst", "size": 4096, "crc32c": "0a1b2c3d"}, …]}
 * </pre>
 *
 * Invariants: {@code asOf} is the hybrid-logical-clock time (microseconds) at which the
 * snapshot was asked, the same on every node of one {@code qkv snapshot}; every file of
 * the snapshot folder but this one is listed; the manifest is written last, and its
 * folder renamed into place after it, so a folder without it is a snapshot that never
 * finished.
 *
 * @param name the snapshot's name
 * @param node the node's id
 * @param url the node's URL
 * @param backend the node's storage backend
 * @param format the format of the files ({@code Snapshots#snapshotFormat})
 * @param asOf the time {@code T} the snapshot was asked at (HLC microseconds)
 * @param createdAt when this node finished it, epoch milliseconds
 * @param ring the ring the node served under, as {@code RingJson} writes it; null when it
 * had none
 * @param files every file, with its path relative to the snapshot folder
 */
public record SnapshotManifest(String name, String node, String url, String backend, String format, long asOf,
		long createdAt, @Nullable JsonNode ring, List<FileEntry> files) {

	/** The manifest's file name in a snapshot folder. */
	public static final String FILE_NAME = "snapshot.json";

	/** The folder of the storage's files in a snapshot folder. */
	public static final String DATA = "data";

	static final int VERSION = 1;

	private static final JsonMapper JSON = JsonMapper.shared();

	public SnapshotManifest {
		files = List.copyOf(files);
	}

	/**
	 * One file of a snapshot.
	 *
	 * @param path relative to the snapshot folder, {@code /} between folders
	 * @param size in bytes
	 * @param crc32c the CRC32C of its content
	 */
	public record FileEntry(String path, long size, long crc32c) {

		/** Reads {@code file} and describes it under {@code path}. */
		static FileEntry of(String path, Path file) throws IOException {
			return new FileEntry(path, Files.size(file), SnapshotManifest.crc32c(file));
		}

	}

	/** The total size of the files. */
	public long bytes() {
		return this.files.stream().mapToLong(FileEntry::size).sum();
	}

	/** The CRC32C of a file's content ({@link IncrementalBackup#crc32c}). */
	static long crc32c(Path file) throws IOException {
		return IncrementalBackup.crc32c(file);
	}

	/** Writes {@code snapshot.json} into {@code dir} and forces it. */
	void write(Path dir, FileIo io) throws IOException {
		ObjectNode root = JSON.createObjectNode();
		root.put("version", VERSION);
		root.put("name", this.name);
		root.put("node", this.node);
		root.put("url", this.url);
		root.put("backend", this.backend);
		root.put("format", this.format);
		root.put("asOf", this.asOf);
		root.put("createdAt", this.createdAt);
		if (this.ring != null) {
			root.set("ring", this.ring);
		}
		ArrayNode list = root.putArray("files");
		for (FileEntry file : this.files) {
			list.addObject()
				.put("path", file.path())
				.put("size", file.size())
				.put("crc32c", String.format("%08x", file.crc32c()));
		}
		byte[] bytes = JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(root);
		try (AppendFile out = io.createNew(dir.resolve(FILE_NAME))) {
			out.write(bytes, 0, bytes.length);
			out.sync();
		}
	}

	/**
	 * The manifest of the snapshot folder {@code dir}.
	 * @throws SnapshotException when it is missing (an unfinished snapshot) or unreadable
	 */
	public static SnapshotManifest read(Path dir) {
		Path file = dir.resolve(FILE_NAME);
		JsonNode root;
		try {
			root = JSON.readTree(Files.readAllBytes(file));
		}
		catch (NoSuchFileException ex) {
			throw new SnapshotException(dir + " has no " + FILE_NAME + ": not a snapshot, or one that never finished");
		}
		catch (IOException | JacksonException ex) {
			throw new SnapshotException(file + " cannot be read: " + ex.getMessage());
		}
		try {
			if (root.path("version").asInt(-1) != VERSION) {
				throw new SnapshotException(file + ": unsupported version " + root.path("version"));
			}
			List<FileEntry> files = new ArrayList<>();
			for (JsonNode entry : root.path("files")) {
				files.add(new FileEntry(text(entry, "path", file), entry.required("size").asLong(),
						Long.parseLong(text(entry, "crc32c", file), 16)));
			}
			JsonNode ring = root.get("ring");
			return new SnapshotManifest(text(root, "name", file), text(root, "node", file), text(root, "url", file),
					text(root, "backend", file), text(root, "format", file), root.required("asOf").asLong(),
					root.path("createdAt").asLong(), (ring != null && ring.isObject()) ? ring : null, files);
		}
		catch (JacksonException | IllegalArgumentException ex) {
			throw new SnapshotException(file + " is malformed: " + ex.getMessage());
		}
	}

	private static String text(JsonNode node, String field, Path file) {
		JsonNode value = node.get(field);
		if (value == null || !value.isString()) {
			throw new SnapshotException(file + " is malformed: no " + field);
		}
		return value.asString();
	}

}
