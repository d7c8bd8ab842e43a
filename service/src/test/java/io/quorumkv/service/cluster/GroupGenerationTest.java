package io.quorumkv.service.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.net.URI;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The metadata group generation a ring carries: a forced reconfiguration moves the ring
 * one epoch and one generation on and fences the lost voters (by id and URL, so that a
 * replacement taking a dead node's id is not fenced); later changes keep the generation;
 * the ring file and the exchange keep it; and a node never takes a ring of an earlier
 * generation, whatever its epoch (a lost voter that comes back with a log that went on).
 */
class GroupGenerationTest {

	@TempDir
	Path folder;

	static final Ring RING = RingTest.three(2);

	static String id(int node) {
		return RING.nodes().get(node).id();
	}

	@Test
	void aForcedRingIsOneEpochAndOneGenerationOnAndFencesTheLostVoters() {
		Ring forced = RING.forceGeneration(List.of(id(1), id(2)));
		assertThat(forced.epoch()).isEqualTo(RING.epoch() + 1);
		assertThat(forced.generation().number()).isEqualTo(1);
		assertThat(forced.generation().fenced()).extracting(RingNode::id).containsExactly(id(1), id(2));
		assertThat(forced.generation().fences(RING.nodes().get(1))).isTrue();
		assertThat(forced.generation().fences(RING.nodes().get(0))).isFalse();
		Ring removing = forced.remove(id(1), "c1", id(0));
		assertThat(removing.generation()).isEqualTo(forced.generation());
		// A replacement takes the dead node's id at another URL: it is not fenced.
		Ring replacing = removing.advance().advance().replace(id(2), URI.create("http://127.0.0.1:8090"), "c2", id(0));
		assertThat(replacing.generation().fences(replacing.node(id(2)).orElseThrow())).isFalse();
		// The next forced generation keeps fencing what is still listed and not removed.
		Ring again = removing.advance().advance().forceGeneration(List.of());
		assertThat(again.generation().number()).isEqualTo(2);
		assertThat(again.generation().fenced()).extracting(RingNode::id).containsExactly(id(2));
	}

	@Test
	void theGenerationSurvivesTheRingsJsonAndIsLeftOutOfThePublicForm() {
		Ring forced = RING.forceGeneration(List.of(id(2)));
		assertThat(RingJson.read(RingJson.write(forced))).isEqualTo(forced);
		assertThat(RingJson.write(RING)).doesNotContain("metadataGroup");
		assertThat(RingJson.writePublic(forced)).doesNotContain("metadataGroup");
		assertThat(RingJson.read(RingJson.write(RING)).generation()).isEqualTo(GroupGeneration.FIRST);
	}

	@Test
	void aRingOfAnEarlierGenerationIsRefusedWhateverItsEpoch() {
		Ring forced = RING.forceGeneration(List.of(id(1), id(2)));
		try (ClusterState state = ClusterStates.of(RING.nodes().get(0).node(), forced, this.folder)) {
			Ring wentOn = RING.remove(id(0), "c", id(1)).advance();
			assertThat(wentOn.epoch()).isGreaterThan(forced.epoch());
			assertThatIllegalArgumentException().isThrownBy(() -> state.install(wentOn).block())
				.withMessageContaining("metadata generation 0")
				.withMessageContaining("serves generation 1");
			assertThat(state.ring()).hasValue(forced);
			Ring next = forced.remove(id(1), "c", id(0));
			assertThat(state.install(next).block()).isTrue();
			assertThat(new RingFile(this.folder).read()).isEqualTo(next);
		}
	}

}
