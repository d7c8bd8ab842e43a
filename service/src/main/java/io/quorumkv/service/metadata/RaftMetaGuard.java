package io.quorumkv.service.metadata;

import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Stream;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.quorumkv.service.storage.ChecksummedFile;

/**
 * Keeps Ratis' term and vote ({@code raft/<group>/current/raft-meta}) recoverable after a
 * write of it failed. Ratis 3.2.1 rewrites that file through a temporary file that it
 * renames over the old one when it closes it, even when a write into it failed: on a full
 * disk an election leaves an empty {@code raft-meta}, and the node cannot start again
 * ({@code 'term' not found in properties: {}}). Found by {@code DiskFullIT} on a busy
 * machine, where the node's first election came after its disk had filled.
 *
 * <p>
 * This guard copies every well-formed {@code raft-meta} into
 * {@code raft-meta-copy/<group>} ({@link ChecksummedFile#replace}: a failed write leaves
 * the last copy), when the group starts, at each leader change and when the first entry
 * of a new term is applied. Before the group starts, a {@code raft-meta} without a term
 * is rewritten from the copy with the copy's term plus {@value #TERM_MARGIN} and no vote:
 * a term above any the node can have voted in since the copy was taken (only elections no
 * one won pass without a copy, and with Ratis' pre-vote a node starts an election only
 * when a majority would join it, so far fewer than the margin come between two copies),
 * so the node never votes twice in one term; the cluster's next election simply starts
 * from that term.
 */
final class RaftMetaGuard {

	/** How far above the copy's term a repaired term goes. */
	static final long TERM_MARGIN = 100;

	static final String META = "raft-meta";

	private static final Log logger = LogFactory.getLog(RaftMetaGuard.class);

	private final Path raft;

	private final Path copies;

	private final Map<String, Long> remembered = new HashMap<>();

	/**
	 * @param raft Ratis' storage folder (one folder per group)
	 * @param copies where the copies go
	 */
	RaftMetaGuard(Path raft, Path copies) {
		this.raft = raft;
		this.copies = copies;
	}

	/** Copies every group's well-formed {@code raft-meta} whose term changed. */
	synchronized void remember() {
		for (Path group : groups()) {
			Path meta = group.resolve("current").resolve(META);
			Long term = term(meta);
			String name = group.getFileName().toString();
			if (term == null || term.equals(this.remembered.get(name))) {
				continue;
			}
			try {
				ChecksummedFile.replace(this.copies.resolve(name), Files.readAllBytes(meta));
				this.remembered.put(name, term);
			}
			catch (IOException ex) {
				logger.debug("Copy of " + meta + " not taken: " + ex.getMessage());
			}
		}
	}

	/**
	 * Rewrites each {@code raft-meta} without a term (a failed write left it so) from its
	 * copy; the groups repaired.
	 */
	synchronized List<String> repair() throws IOException {
		List<String> repaired = new ArrayList<>();
		for (Path group : groups()) {
			Path meta = group.resolve("current").resolve(META);
			if (!Files.exists(meta) || term(meta) != null) {
				continue;
			}
			String name = group.getFileName().toString();
			Long copied = term(this.copies.resolve(name));
			if (copied == null) {
				logger.error(meta + " holds no term (a write of it failed, as on a full disk) and no copy of it "
						+ "was kept: the metadata group cannot start. Write 'term=<a term above any this node "
						+ "took part in>' and 'votedFor=' into it, or remove this node and add it back");
				continue;
			}
			long term = copied + TERM_MARGIN;
			ChecksummedFile.replace(meta, ("term=" + term + "\nvotedFor=\n").getBytes(StandardCharsets.ISO_8859_1));
			logger.warn(meta + " held no term (a write of it failed, as on a full disk): rewritten from its copy with "
					+ "term " + term + " (the copy's " + copied + " + " + TERM_MARGIN + ") and no vote");
			repaired.add(name);
		}
		return repaired;
	}

	private List<Path> groups() {
		if (!Files.isDirectory(this.raft)) {
			return List.of();
		}
		try (Stream<Path> children = Files.list(this.raft)) {
			return children.filter((child) -> Files.isDirectory(child.resolve("current"))).toList();
		}
		catch (IOException ex) {
			logger.debug("Cannot list " + this.raft + ": " + ex.getMessage());
			return List.of();
		}
	}

	/** The term a {@code raft-meta} holds; null when missing, empty or unreadable. */
	static @Nullable Long term(Path meta) {
		try {
			if (!Files.isRegularFile(meta)) {
				return null;
			}
			Properties properties = new Properties();
			properties.load(new StringReader(Files.readString(meta, StandardCharsets.ISO_8859_1)));
			String term = properties.getProperty("term");
			return (term != null) ? Long.valueOf(term.strip()) : null;
		}
		catch (IOException | NumberFormatException ex) {
			return null;
		}
	}

}
