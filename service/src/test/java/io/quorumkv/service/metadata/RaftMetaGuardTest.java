package io.quorumkv.service.metadata;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@code raft-meta} that a failed write left without its term is rewritten from the
 * last copy, above the copied term and with no vote; a well-formed one is left alone.
 */
class RaftMetaGuardTest {

	@TempDir
	Path data;

	@Test
	void anEmptiedRaftMetaIsRewrittenFromItsCopyAboveTheCopiedTerm() throws IOException {
		Path meta = meta("group-a");
		Files.writeString(meta, "#ratis\nterm=7\nvotedFor=node-b\n");
		RaftMetaGuard guard = guard();
		guard.remember();
		assertThat(guard.repair()).isEmpty();
		assertThat(Files.readString(meta)).contains("term=7").contains("votedFor=node-b");

		// A failed write renamed an empty file over it (Ratis 3.2.1 on a full disk).
		Files.writeString(meta, "");
		assertThat(guard().repair()).containsExactly("group-a");
		assertThat(RaftMetaGuard.term(meta)).isEqualTo(7 + RaftMetaGuard.TERM_MARGIN);
		assertThat(Files.readString(meta)).contains("votedFor=\n").doesNotContain("node-b");
		assertThat(guard().repair()).isEmpty();
	}

	@Test
	void aCopyFollowsTheTermAndANewTermIsCopiedAgain() throws IOException {
		Path meta = meta("group-b");
		Files.writeString(meta, "term=3\nvotedFor=\n");
		RaftMetaGuard guard = guard();
		guard.remember();
		Files.writeString(meta, "term=9\nvotedFor=node-c\n");
		guard.remember();
		Files.writeString(meta, "votedFor=\n");
		assertThat(guard.repair()).containsExactly("group-b");
		assertThat(RaftMetaGuard.term(meta)).isEqualTo(9 + RaftMetaGuard.TERM_MARGIN);
	}

	@Test
	void withoutACopyAnEmptiedRaftMetaIsLeftAsItIs() throws IOException {
		Path meta = meta("group-c");
		Files.writeString(meta, "");
		assertThat(guard().repair()).isEmpty();
		assertThat(Files.readString(meta)).isEmpty();
	}

	private RaftMetaGuard guard() {
		return new RaftMetaGuard(this.data.resolve("raft"), this.data.resolve("raft-meta-copy"));
	}

	private Path meta(String group) throws IOException {
		Path current = Files.createDirectories(this.data.resolve("raft").resolve(group).resolve("current"));
		return current.resolve(RaftMetaGuard.META);
	}

}
