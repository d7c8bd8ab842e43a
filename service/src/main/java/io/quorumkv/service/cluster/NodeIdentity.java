package io.quorumkv.service.cluster;

import java.nio.file.Path;
import java.util.UUID;

import io.quorumkv.service.storage.ChecksummedFile;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The node's stable id, kept in {@code <data folder>/node-id} ({@link ChecksummedFile},
 * magic {@code QKVI}, before it the text envelope {@code qkv-node-id}, version 1, body =
 * the id). Created on the node's first start and never changed afterwards: the id is what
 * placement hashes, so a node keeps its place and its data when its host or port change.
 */
final class NodeIdentity {

	static final String FILE = "node-id";

	/** {@code QKVI}. */
	static final int MAGIC = 0x514b5649;

	private static final Log logger = LogFactory.getLog(NodeIdentity.class);

	private NodeIdentity() {
	}

	/**
	 * The id kept in {@code folder}, or, on the first start, {@code firstId} (null: a
	 * fresh random id), written there before it is returned.
	 */
	static String loadOrCreate(Path folder, String firstId) {
		Path file = folder.resolve(FILE);
		String id = envelope(file).readText();
		if (id != null) {
			return id;
		}
		envelope(file).writeText(firstId);
		logger.info("First start: this node's id is " + firstId + " (kept in " + file.toAbsolutePath() + ")");
		return firstId;
	}

	/**
	 * Gives the node another id: a new node that replaces a dead one takes its id, before
	 * it holds any ring or data of the cluster.
	 */
	static void replace(Path folder, String id) {
		envelope(folder.resolve(FILE)).writeText(id);
	}

	private static ChecksummedFile envelope(Path file) {
		return ChecksummedFile.text(file, MAGIC, "qkv-node-id");
	}

	/** A fresh id for a node that is not in the seed list. */
	static String fresh() {
		return "node-" + UUID.randomUUID();
	}

}
