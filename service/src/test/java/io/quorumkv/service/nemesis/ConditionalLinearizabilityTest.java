package io.quorumkv.service.nemesis;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.quorumkv.service.support.EntityCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Conditional writes and serial reads on three real nodes in this JVM, checked for
 * linearizability: six clients ({@link RegisterClients}), each sending to the nodes in
 * turn, run a random mix of {@code PUT If-Match} (on the version the client last learnt),
 * {@code PUT If-None-Match:
 * *}, {@code DELETE If-Match} and {@code GET consistency=serial} on three keys for ten
 * seconds. Every call and answer is timed on one monotonic clock; 201/202 is a condition
 * held (with the version written), 412 one that failed (with the current version), 504 or
 * no answer an outcome unknown, a serial read the value and version it saw. The history
 * must be linearizable ({@link LinearizabilityChecker}); a search that spends its budget
 * fails the test too. The seed of the clients' choices is printed;
 * {@code -Dquorumkv.conditional.seed=N} replays them (not the interleaving).
 *
 * <p>
 * Before acceptors recorded their commits, a round that completed another request's
 * proposal stored it under its own ballot's time, and this test failed in nearly every
 * run: the writer's next {@code If-Match} with its {@code 201}'s {@code ETag} failed with
 * a {@code 412} naming a version no write created. On a build whose completion kept the
 * proposal's timestamp, an acceptor that accepts below its promise (two
 * {@code If-None-Match: *} both held) and one that does not record its promises (two
 * conditions on one version both held) failed it.
 */
class ConditionalLinearizabilityTest {

	private static final int CLIENTS = 6;

	private static final List<String> KEYS = List.of("lin-a", "lin-b", "lin-c");

	private static final long RUN_NANOS = TimeUnit.SECONDS.toNanos(10);

	/** Bounds the history (and so the search) on a fast machine. */
	private static final int MAX_PER_CLIENT = 250;

	@TempDir
	static Path root;

	@Test
	void conditionalWritesAndSerialReadsAreLinearizable() throws Exception {
		long seed = Long.getLong("quorumkv.conditional.seed", new Random().nextLong());
		System.out.println("ConditionalLinearizabilityTest seed " + seed);
		List<LinearizabilityOp> history = new ArrayList<>();
		Map<String, Integer> answers;
		try (EntityCluster cluster = EntityCluster.start(root)) {
			RegisterClients clients = new RegisterClients(cluster, KEYS);
			ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
			List<Future<List<LinearizabilityOp>>> runs = new ArrayList<>();
			long end = System.nanoTime() + RUN_NANOS;
			for (int c = 0; c < CLIENTS; c++) {
				int client = c;
				runs.add(pool.submit(() -> clients.run(client, new Random(seed + client),
						(n) -> (client + n) % cluster.size(), () -> System.nanoTime() < end, MAX_PER_CLIENT, 0)));
			}
			for (Future<List<LinearizabilityOp>> run : runs) {
				history.addAll(run.get(120, TimeUnit.SECONDS));
			}
			pool.shutdown();
			answers = clients.answers();
		}
		Map<String, Long> perKey = history.stream()
			.collect(Collectors.groupingBy(LinearizabilityOp::key, TreeMap::new, Collectors.counting()));
		System.out.println("seed " + seed + ": " + history.size() + " operations " + perKey + ", answers " + answers);
		assertThat(answers.keySet()).as("seed %d: no answer but these", seed)
			.isSubsetOf("200", "404", "201", "202", "412", "504", RegisterClients.NO_ANSWER);
		assertThat(answers.getOrDefault("412", 0)).as("seed %d: conditions failed (contention happened)", seed)
			.isPositive();
		LinearizabilityResult.Linearizable ok = RegisterClients.assertLinearizable(history, "seed " + seed,
				Path.of("target", "conditional-linearizability-" + seed));
		assertThat(ok.operations()).isEqualTo(history.size());
	}

}
