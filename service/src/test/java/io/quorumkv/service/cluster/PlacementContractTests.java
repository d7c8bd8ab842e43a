package io.quorumkv.service.cluster;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/**
 * What every {@link Placement} must do, run against each implementation through
 * {@link #create(List)}. Keys and nodes are fixed, so the statistical checks are
 * deterministic: a bound that passes once passes always, and fails only if placement
 * itself changes.
 */
abstract class PlacementContractTests {

	static final int BALANCE_KEYS = 1_000_000;

	abstract Placement create(List<Node> nodes);

	/** Largest allowed |count - mean| / mean for primaries and for replica sets. */
	abstract double balanceTolerance();

	static List<Node> nodes(int count) {
		return IntStream.rangeClosed(1, count).mapToObj((i) -> Node.of("http://127.0.0.1:" + (8080 + i))).toList();
	}

	static byte[] key(int i) {
		return ("key-" + i).getBytes(StandardCharsets.UTF_8);
	}

	@Test
	void answersTheSameReplicasWhateverTheOrderOfTheNodes() {
		List<Node> nodes = nodes(5);
		Placement reference = create(nodes);
		Random random = new Random(42);
		for (int round = 0; round < 3; round++) {
			List<Node> shuffled = new ArrayList<>(nodes);
			Collections.shuffle(shuffled, random);
			Placement other = create(shuffled);
			assertThat(other.nodes()).isEqualTo(reference.nodes());
			for (int i = 0; i < 10_000; i++) {
				assertThat(other.replicas(key(i), 3)).isEqualTo(reference.replicas(key(i), 3));
			}
		}
	}

	@Test
	void isReplicaAnswersWhatTheReplicaListSays() {
		for (int size = 1; size <= 7; size++) {
			Placement placement = create(nodes(size));
			for (int i = 0; i < 2_000; i++) {
				byte[] key = key(i);
				for (int count = 1; count <= size; count++) {
					List<Node> replicas = placement.replicas(key, count);
					for (Node node : placement.nodes()) {
						assertThat(placement.isReplica(key, count, node.id()))
							.as("key %d, %d of %d nodes, %s", i, count, size, node.id())
							.isEqualTo(replicas.contains(node));
					}
				}
				assertThat(placement.isReplica(key, 1, "http://127.0.0.1:1")).as("a node it does not know").isFalse();
			}
		}
		assertThatIllegalArgumentException().isThrownBy(() -> create(nodes(3)).isReplica(key(1), 4, "x"));
	}

	@Test
	void listsTheNodesInCanonicalOrder() {
		List<Node> nodes = new ArrayList<>(nodes(4));
		Collections.reverse(nodes);
		Placement placement = create(nodes);
		assertThat(placement.nodes()).extracting(Node::id).isSorted().hasSize(4);
		nodes.clear();
		assertThat(placement.nodes()).as("copied, not a view of the argument").hasSize(4);
		assertThatThrownBy(() -> placement.nodes().clear()).isInstanceOf(UnsupportedOperationException.class);
	}

	@Test
	void answersDistinctReplicasAndShorterAnswersArePrefixesOfLongerOnes() {
		Placement placement = create(nodes(5));
		for (int i = 0; i < 10_000; i++) {
			List<Node> all = placement.replicas(key(i), 5);
			assertThat(all).doesNotHaveDuplicates().hasSize(5);
			for (int count = 1; count < 5; count++) {
				assertThat(placement.replicas(key(i), count)).isEqualTo(all.subList(0, count));
			}
		}
	}

	@Test
	void aSingleNodeHoldsEverything() {
		Node only = Node.of("http://127.0.0.1:8081");
		Placement placement = create(List.of(only));
		assertThat(placement.replicas(key(1), 1)).containsExactly(only);
		assertThat(placement.replicas(new byte[0], 1)).containsExactly(only);
	}

	@Test
	void countEqualToTheNodeCountAnswersEveryNode() {
		Placement placement = create(nodes(3));
		assertThat(placement.replicas(key(7), 3)).containsExactlyInAnyOrderElementsOf(nodes(3));
		assertThat(placement.replicas(new byte[0], 3)).containsExactlyInAnyOrderElementsOf(nodes(3));
	}

	@Test
	void answersAnUnmodifiableList() {
		List<Node> replicas = create(nodes(3)).replicas(key(1), 2);
		assertThatThrownBy(() -> replicas.add(replicas.get(0))).isInstanceOf(UnsupportedOperationException.class);
	}

	@Test
	void rejectsBadNodeLists() {
		assertThatIllegalArgumentException().isThrownBy(() -> create(List.of()))
			.withMessageContaining("at least one node");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> create(List.of(Node.of("http://a:1"), Node.of("http://b:1"), Node.of("http://a:1/"))))
			.withMessageContaining("duplicate node")
			.withMessageContaining("http://a:1");
		assertThatNullPointerException().isThrownBy(() -> create(Collections.singletonList(null)));
	}

	@Test
	void rejectsBadRequests() {
		Placement placement = create(nodes(3));
		assertThatIllegalArgumentException().isThrownBy(() -> placement.replicas(key(1), 0))
			.withMessage("replica count must be between 1 and the node count 3, was 0");
		assertThatIllegalArgumentException().isThrownBy(() -> placement.replicas(key(1), 4))
			.withMessageContaining("was 4");
		assertThatIllegalArgumentException().isThrownBy(() -> placement.replicas(key(1), -1));
		assertThatNullPointerException().isThrownBy(() -> placement.replicas(null, 1)).withMessage("key");
	}

	@Test
	void isSafeToShareBetweenThreads() {
		Placement placement = create(nodes(5));
		List<List<Node>> sequential = IntStream.range(0, 20_000)
			.mapToObj((i) -> placement.replicas(key(i), 3))
			.toList();
		List<List<Node>> parallel = IntStream.range(0, 20_000)
			.parallel()
			.mapToObj((i) -> placement.replicas(key(i), 3))
			.toList();
		assertThat(parallel).isEqualTo(sequential);
	}

	@ParameterizedTest
	@ValueSource(ints = { 3, 5 })
	void spreadsPrimariesEvenly(int nodeCount) {
		Placement placement = create(nodes(nodeCount));
		int[] primaries = new int[nodeCount];
		for (int i = 0; i < BALANCE_KEYS; i++) {
			primaries[placement.nodes().indexOf(placement.replicas(key(i), 1).get(0))]++;
		}
		double mean = (double) BALANCE_KEYS / nodeCount;
		for (int count : primaries) {
			assertThat((double) count).isCloseTo(mean, within(mean * balanceTolerance()));
		}
	}

	@Test
	void spreadsReplicaSetsEvenly() {
		Placement placement = create(nodes(3));
		int[] held = new int[3];
		for (int i = 0; i < BALANCE_KEYS; i++) {
			for (Node node : placement.replicas(key(i), 2)) {
				held[placement.nodes().indexOf(node)]++;
			}
		}
		double mean = 2.0 * BALANCE_KEYS / 3;
		for (int count : held) {
			assertThat((double) count).isCloseTo(mean, within(mean * balanceTolerance()));
		}
	}

	@Test
	void addingAFourthNodeMovesAboutAQuarterOfThePrimariesAllToIt() {
		Placement before = create(nodes(3));
		Placement after = create(nodes(4));
		Node added = nodes(4).get(3);
		int moved = 0;
		for (int i = 0; i < BALANCE_KEYS; i++) {
			Node was = before.replicas(key(i), 1).get(0);
			Node is = after.replicas(key(i), 1).get(0);
			if (!was.equals(is)) {
				moved++;
				assertThat(is).as("new primary of moved key-%d", i).isEqualTo(added);
			}
		}
		assertThat((double) moved / BALANCE_KEYS).isBetween(0.20, 0.30);
	}

	@Test
	void removingANodeMovesOnlyTheKeysItHeld() {
		List<Node> four = nodes(4);
		Node removed = four.get(1);
		Placement before = create(four);
		Placement after = create(four.stream().filter((n) -> !n.equals(removed)).toList());
		for (int i = 0; i < 200_000; i++) {
			List<Node> was = before.replicas(key(i), 2);
			List<Node> is = after.replicas(key(i), 2);
			if (!was.get(0).equals(removed)) {
				assertThat(is.get(0)).as("primary of key-%d", i).isEqualTo(was.get(0));
			}
			// Every surviving replica keeps its copy: no key moves between surviving
			// nodes.
			HashSet<Node> kept = new HashSet<>(was);
			kept.remove(removed);
			assertThat(is).as("replicas of key-%d", i).containsAll(kept);
		}
	}

}
