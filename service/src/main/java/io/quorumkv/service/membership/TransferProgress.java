package io.quorumkv.service.membership;

import java.nio.file.Path;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

import io.quorumkv.service.storage.ChecksummedFile;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * How far this node's transfers of one change have come, kept in
 * {@code <data folder>/transfers} ({@link ChecksummedFile}, magic {@code QKVT}, before it
 * the text envelope {@code qkv-transfers}, version 1, body JSON:
 * {@code {"change": id, "sources": {sourceId: {"cursor": base64 | null, "done": bool,
 * "keys": n, "bytes": n, "scanned": n}}}}). Invariant: everything up to a source's cursor
 * was durable in storage before the cursor was written, so a transfer resumes after it.
 *
 * @param change the change's id
 * @param sources each source's progress, by node id
 */
record TransferProgress(String change, Map<String, Source> sources) {

	static final String FILE = "transfers";

	/** {@code QKVT}. */
	private static final int MAGIC = 0x514b5654;

	private static final JsonMapper JSON = JsonMapper.shared();

	TransferProgress {
		sources = Map.copyOf(sources);
	}

	/**
	 * One source's progress.
	 *
	 * @param cursor the last key received and kept (or scanned past), null before the
	 * first
	 * @param done whether the source's stream ended
	 * @param keys entries received
	 * @param bytes bytes of entries received
	 * @param scanned bytes the source scanned to find them
	 */
	record Source(byte @Nullable [] cursor, boolean done, long keys, long bytes, long scanned) {

		static final Source FRESH = new Source(null, false, 0, 0, 0);

	}

	TransferProgress with(String source, Source progress) {
		Map<String, Source> next = new LinkedHashMap<>(this.sources);
		next.put(source, progress);
		return new TransferProgress(this.change, next);
	}

	static @Nullable TransferProgress read(Path folder) {
		String body = ChecksummedFile.text(folder.resolve(FILE), MAGIC, "qkv-transfers").readText();
		if (body == null) {
			return null;
		}
		try {
			JsonNode root = JSON.readTree(body);
			Map<String, Source> sources = new LinkedHashMap<>();
			for (Map.Entry<String, JsonNode> entry : root.required("sources").properties()) {
				JsonNode source = entry.getValue();
				JsonNode cursor = source.get("cursor");
				sources.put(entry.getKey(),
						new Source(
								(cursor == null || cursor.isNull()) ? null
										: Base64.getDecoder().decode(cursor.stringValue()),
								source.required("done").asBoolean(), source.required("keys").asLong(),
								source.required("bytes").asLong(), source.required("scanned").asLong()));
			}
			return new TransferProgress(root.required("change").stringValue(), sources);
		}
		catch (JacksonException | IllegalArgumentException ex) {
			throw new IllegalStateException(
					"corrupt file " + folder.resolve(FILE).toAbsolutePath() + ": " + ex.getMessage(), ex);
		}
	}

	void write(Path folder) {
		ObjectNode root = JSON.createObjectNode();
		root.put("change", this.change);
		ObjectNode sources = root.putObject("sources");
		this.sources.forEach((id, source) -> {
			ObjectNode node = sources.putObject(id);
			byte[] cursor = source.cursor();
			if (cursor != null) {
				node.put("cursor", Base64.getEncoder().encodeToString(cursor));
			}
			else {
				node.putNull("cursor");
			}
			node.put("done", source.done());
			node.put("keys", source.keys());
			node.put("bytes", source.bytes());
			node.put("scanned", source.scanned());
		});
		ChecksummedFile.text(folder.resolve(FILE), MAGIC, "qkv-transfers").writeText(JSON.writeValueAsString(root));
	}

}
