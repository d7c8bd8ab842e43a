package io.quorumkv.service.nemesis;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import io.quorumkv.service.nemesis.RegisterModel.Condition;
import io.quorumkv.service.nemesis.RegisterModel.DeleteIfVersion;
import io.quorumkv.service.nemesis.RegisterModel.Input;
import io.quorumkv.service.nemesis.RegisterModel.Observed;
import io.quorumkv.service.nemesis.RegisterModel.Output;
import io.quorumkv.service.nemesis.RegisterModel.PutIfAbsent;
import io.quorumkv.service.nemesis.RegisterModel.PutIfVersion;
import io.quorumkv.service.nemesis.RegisterModel.Read;
import io.quorumkv.service.support.EntityCluster;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Conditional writes and serial reads on three real nodes in this JVM, checked for
 * linearizability: six clients, each sending to the nodes in turn, run a random mix of
 * {@code PUT If-Match} (on the version the client last learnt), {@code PUT If-None-Match:
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

	private final List<LinearizabilityOp> history = new ArrayList<>();

	private final AtomicLong ids = new AtomicLong();

	private final Map<String, Integer> answers = new ConcurrentHashMap<>();

	@Test
	void conditionalWritesAndSerialReadsAreLinearizable() throws Exception {
		long seed = Long.getLong("quorumkv.conditional.seed", new Random().nextLong());
		System.out.println("ConditionalLinearizabilityTest seed " + seed);
		try (EntityCluster cluster = EntityCluster.start(root)) {
			ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
			List<Future<List<LinearizabilityOp>>> runs = new ArrayList<>();
			long end = System.nanoTime() + RUN_NANOS;
			for (int c = 0; c < CLIENTS; c++) {
				int client = c;
				runs.add(pool.submit(() -> run(cluster, client, new Random(seed + client), end)));
			}
			for (Future<List<LinearizabilityOp>> run : runs) {
				this.history.addAll(run.get(120, TimeUnit.SECONDS));
			}
			pool.shutdown();
		}
		Map<String, Long> perKey = this.history.stream()
			.collect(Collectors.groupingBy(LinearizabilityOp::key, TreeMap::new, Collectors.counting()));
		System.out.println("seed " + seed + ": " + this.history.size() + " operations " + perKey + ", answers "
				+ new TreeMap<>(this.answers));
		assertThat(this.answers.getOrDefault("412", 0)).as("seed %d: conditions failed (contention happened)", seed)
			.isPositive();
		LinearizabilityResult result = new LinearizabilityChecker(LinearizabilityChecker.Budget.DEFAULT)
			.check(this.history);
		switch (result) {
			case LinearizabilityResult.Linearizable ok -> assertThat(ok.operations()).isEqualTo(this.history.size());
			case LinearizabilityResult.Violation violation -> throw new AssertionError("seed " + seed + ": "
					+ violation.explain() + "\nthe key's history: " + written(violation.key(), seed));
			case LinearizabilityResult.Unknown unknown ->
				throw new AssertionError("seed " + seed + ": the checker's budget ran out on key " + unknown.key()
						+ " (" + unknown.reason() + "): no verdict; make the history smaller");
		}
	}

	/**
	 * Writes {@code key}'s operations, in call order, to a file under target; its path.
	 */
	private Path written(String key, long seed) throws IOException {
		Path file = Path.of("target", "conditional-linearizability-" + seed + "-" + key + ".txt").toAbsolutePath();
		Files.createDirectories(file.getParent());
		Files.write(file,
				this.history.stream()
					.filter((op) -> op.key().equals(key))
					.sorted(Comparator.comparingLong(LinearizabilityOp::call))
					.map(LinearizabilityOp::toString)
					.toList());
		return file;
	}

	private List<LinearizabilityOp> run(EntityCluster cluster, int client, Random random, long end)
			throws InterruptedException {
		List<LinearizabilityOp> ops = new ArrayList<>();
		Map<String, Long> known = new TreeMap<>();
		for (int n = 0; n < MAX_PER_CLIENT && System.nanoTime() < end; n++) {
			int node = (client + n) % cluster.size();
			String key = KEYS.get(random.nextInt(KEYS.size()));
			long version = known.getOrDefault(key, RegisterModel.ABSENT);
			String value = "c" + client + "-" + n;
			int choice = random.nextInt(10);
			long call = System.nanoTime();
			Call sent;
			if (choice < 3) {
				sent = send(cluster, node, "GET", key + "&consistency=serial", null, new Read());
			}
			else if (version == RegisterModel.ABSENT || choice < 5) {
				sent = send(cluster, node, "PUT", key, value, new PutIfAbsent(value, RegisterModel.UNKNOWN),
						"If-None-Match", "*");
			}
			else if (choice < 9) {
				sent = send(cluster, node, "PUT", key, value, new PutIfVersion(value, version, RegisterModel.UNKNOWN),
						"If-Match", tag(version));
			}
			else {
				sent = send(cluster, node, "DELETE", key, null, new DeleteIfVersion(version), "If-Match", tag(version));
			}
			long ret = System.nanoTime();
			ops.add(new LinearizabilityOp(this.ids.getAndIncrement(), client, key, sent.input(), sent.output(), call,
					ret));
			known.put(key, sent.learnt(version));
		}
		return ops;
	}

	/** What one call asked (with the version it wrote, once known) and answered. */
	private record Call(Input input, @Nullable Output output, long learnt) {

		long learnt(long before) {
			return (this.learnt == RegisterModel.UNKNOWN) ? before : this.learnt;
		}

	}

	private Call send(EntityCluster cluster, int node, String method, String key, @Nullable String body, Input input,
			String... headers) throws InterruptedException {
		HttpResponse<String> response;
		try {
			response = cluster.send(node, method, "id=" + key, body, headers);
		}
		catch (IOException ex) {
			this.answers.merge("no answer", 1, Integer::sum);
			return new Call(input, null, RegisterModel.UNKNOWN);
		}
		int status = response.statusCode();
		this.answers.merge(String.valueOf(status), 1, Integer::sum);
		long version = version(EntityCluster.etag(response));
		if (input instanceof Read) {
			return switch (status) {
				case 200 -> new Call(input, new Observed(response.body(), version), version);
				case 404 -> new Call(input, new Observed(null, RegisterModel.ABSENT), RegisterModel.ABSENT);
				default -> throw new AssertionError("serial read answered " + status + " " + response.body());
			};
		}
		return switch (status) {
			case 201, 202 -> new Call(written(input, version), new Condition(true, RegisterModel.UNKNOWN),
					(input instanceof DeleteIfVersion) ? RegisterModel.ABSENT : version);
			case 412 -> new Call(input, new Condition(false, version), version);
			// a 504 says "may have been applied" or "not applied"; both are within
			// unknown
			case 504 -> new Call(input, null, RegisterModel.UNKNOWN);
			default -> throw new AssertionError(method + " answered " + status + " " + response.body());
		};
	}

	/**
	 * {@code input} with the version its write created ({@link RegisterModel#ABSENT} for
	 * a delete).
	 */
	private static Input written(Input input, long version) {
		return switch (input) {
			case PutIfVersion put -> new PutIfVersion(put.value(), put.expected(), version);
			case PutIfAbsent put -> new PutIfAbsent(put.value(), version);
			default -> input;
		};
	}

	/** The version an {@code ETag} names, {@link RegisterModel#ABSENT} for none. */
	private static long version(@Nullable String etag) {
		if (etag == null) {
			return RegisterModel.ABSENT;
		}
		long version = Long.parseUnsignedLong(etag.substring(1, etag.length() - 1), 16);
		assertThat(version).as("ETag %s", etag).isGreaterThan(RegisterModel.ABSENT);
		return version;
	}

	private static String tag(long version) {
		return "\"" + Long.toHexString(version) + "\"";
	}

}
