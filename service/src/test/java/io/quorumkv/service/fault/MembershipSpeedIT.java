package io.quorumkv.service.fault;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.quorumkv.service.support.FaultFolders;
import io.quorumkv.service.support.KvClient;
import io.quorumkv.service.support.NodeProcesses;
import io.quorumkv.service.support.RingWatch;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Speed of membership changes (measured and printed, not asserted; only the changes'
 * completion and their data are checked), with {@code -Pfaults-long}: real node
 * processes, RF 3, {@code quorumkv.speed.keys} entries of 100 bytes (default 100,000).
 * <ul>
 * <li>3 → 4 on an idle cluster: the join's wall time and the streaming rate;</li>
 * <li>a constant rate of requests (half 2/3 reads, half 2/3 writes, intended-start
 * latency, so no coordinated omission) without a change, then during a join 4 → 5: p50,
 * p99 and the streaming rate under load.</li>
 * </ul>
 * Requests that time out count as errors and are printed, not asserted: on a shared
 * machine they measure the machine as much as the change.
 */
@EnabledIfSystemProperty(named = "quorumkv.faults.long", matches = "true")
@ExtendWith(FaultFolders.KeepOnFailure.class)
class MembershipSpeedIT {

	static final int KEYS = Integer.getInteger("quorumkv.speed.keys", 100_000);

	static final int RATE = Integer.getInteger("quorumkv.speed.rate", 400);

	static Path root;

	static NodeProcesses nodes;

	static final List<String> live = new CopyOnWriteArrayList<>();

	final KvClient client = new KvClient(Duration.ofSeconds(10));

	final RingWatch rings = new RingWatch(this.client);

	@BeforeAll
	static void start() {
		root = FaultFolders.create("speed");
		nodes = new NodeProcesses(root, 5, false,
				Map.of("quorumkv.cluster.replication-factor", "3", "management.endpoints.web.exposure.include",
						"health,quorumkv", "quorumkv.cluster.membership.poll-interval", "200ms"),
				List.of("-Xmx512m"))
			.seeds(3)
			.startFirst(3);
		for (int i = 0; i < 3; i++) {
			live.add(nodes.url(i));
		}
	}

	@AfterAll
	static void stop() {
		if (nodes != null) {
			nodes.close();
		}
		FaultFolders.deleteUnlessFailed(root);
	}

	@Test
	void joinSpeedIdleAndUnderLoad() throws Exception {
		long loadStart = System.nanoTime();
		preload();
		double loadSeconds = (System.nanoTime() - loadStart) / 1e9;
		System.out.printf("MembershipSpeedIT: preloaded %d entries of 100 bytes in %.1f s%n", KEYS, loadSeconds);

		Join idle = join(3);
		System.out.printf(
				"MembershipSpeedIT: 3 -> 4 idle: wall %.1f s; streamed %d keys, %.1f MB at %.2f MB/s, " + "%d keys/s%n",
				idle.wallSeconds, idle.keys, idle.bytes / 1e6, idle.bytesPerSecond / 1e6, idle.keysPerSecond);

		// Let the idle join's clean-up (a full compaction on every node) finish first.
		sleep(15_000);
		Latencies baseline = constantRate(Duration.ofSeconds(20), null);
		System.out.printf("MembershipSpeedIT: %d req/s without a change: %s%n", RATE, baseline);
		Join[] underLoad = new Join[1];
		// Started before the measurement: a JVM starting on the same cores is not the
		// join.
		nodes.start(4);
		Latencies during = constantRate(Duration.ofSeconds(600), () -> underLoad[0] = join(4));
		System.out.printf(
				"MembershipSpeedIT: %d req/s during 4 -> 5: %s; the join: wall %.1f s, streamed %d keys, "
						+ "%.1f MB at %.2f MB/s, %d keys/s%n",
				RATE, during, underLoad[0].wallSeconds, underLoad[0].keys, underLoad[0].bytes / 1e6,
				underLoad[0].bytesPerSecond / 1e6, underLoad[0].keysPerSecond);
		System.out.printf("MembershipSpeedIT: p99 during the join / without: %.2f%n",
				during.percentile(0.99) / (double) baseline.percentile(0.99));
		System.out.println(
				"MembershipSpeedIT: load average " + java.nio.file.Files.readString(Path.of("/proc/loadavg")).strip()
						+ " on " + Runtime.getRuntime().availableProcessors() + " cores");
		for (int i = 0; i < KEYS; i += Math.max(1, KEYS / 500)) {
			KvClient.Answer answer = this.client.get(nodes.url(i % 5), "bulk-" + i, "2/3");
			assertThat(answer.status()).as("bulk-%d", i).isEqualTo(200);
			assertThat(answer.body()).startsWith("bulk-" + i + "#");
		}
	}

	private void preload() throws InterruptedException {
		ExecutorService writers = Executors.newFixedThreadPool(8);
		AtomicLong failed = new AtomicLong();
		for (int t = 0; t < 8; t++) {
			int thread = t;
			writers.execute(() -> {
				KvClient own = new KvClient(Duration.ofSeconds(10));
				for (int i = thread; i < KEYS; i += 8) {
					String key = "bulk-" + i;
					String value = (key + "#" + "x".repeat(100)).substring(0, 100);
					int status = own.put(live.get(i % 3), key, value, "2/3");
					for (int retry = 0; status != 201 && retry < 3; retry++) {
						status = own.put(live.get((i + retry + 1) % 3), key, value, "2/3");
					}
					if (status != 201) {
						failed.incrementAndGet();
					}
				}
			});
		}
		writers.shutdown();
		assertThat(writers.awaitTermination(30, TimeUnit.MINUTES)).isTrue();
		assertThat(failed.get()).isZero();
	}

	private Join join(int node) {
		if (!nodes.running(node)) {
			nodes.start(node);
		}
		long epoch = this.rings.epoch(nodes.url(0));
		long start = System.nanoTime();
		KvClient.Answer answer = this.rings.change(nodes.url(0), "join", "{\"url\":\"" + nodes.url(node) + "\"}");
		assertThat(answer.status()).as(answer.body()).isEqualTo(200);
		Pattern progress = Pattern
			.compile("\"keys\":(\\d+),\"bytes\":(\\d+),\"bytesPerSecond\":(\\d+),\"keysPerSecond\":(\\d+)");
		Join join = new Join();
		List<String> members = new ArrayList<>(live);
		members.add(nodes.url(node));
		long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(30);
		while (System.nanoTime() < deadline) {
			Matcher matcher = progress.matcher(this.rings.transfers(nodes.url(node)));
			if (matcher.find()) {
				join.keys = Long.parseLong(matcher.group(1));
				join.bytes = Long.parseLong(matcher.group(2));
				join.bytesPerSecond = Long.parseLong(matcher.group(3));
				join.keysPerSecond = Long.parseLong(matcher.group(4));
			}
			if (this.rings.ring(nodes.url(0)).contains("\"epoch\":" + (epoch + 3) + ",")) {
				break;
			}
			sleep(250);
		}
		this.rings.awaitSettled(members, epoch + 3, Duration.ofSeconds(60));
		join.wallSeconds = (System.nanoTime() - start) / 1e9;
		live.add(nodes.url(node));
		return join;
	}

	/**
	 * Sends {@link #RATE} requests a second (alternately a read and a write of a random
	 * bulk key at 2/3, through the live nodes in turn) for {@code limit}, or until
	 * {@code during} returns when given; latency counts from each request's intended
	 * start.
	 */
	private Latencies constantRate(Duration limit, Runnable during) throws Exception {
		HttpClient http = HttpClient.newBuilder()
			.version(HttpClient.Version.HTTP_1_1)
			.connectTimeout(Duration.ofSeconds(2))
			.executor(Executors.newFixedThreadPool(4))
			.build();
		ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor();
		ConcurrentLinkedQueue<Long> micros = new ConcurrentLinkedQueue<>();
		Latencies result = new Latencies();
		AtomicLong sequence = new AtomicLong();
		long period = 1_000_000_000L / RATE;
		long origin = System.nanoTime();
		ticker.scheduleAtFixedRate(() -> {
			long n = sequence.getAndIncrement();
			long intended = origin + n * period;
			int key = (int) ((n * 2_654_435_761L) % KEYS);
			String base = live.get((int) (n % live.size()));
			URI uri = URI.create(base + "/v0/entity?id=" + URLEncoder.encode("bulk-" + key, StandardCharsets.UTF_8)
					+ "&replicas=2/3");
			HttpRequest request = (n % 2 == 0)
					? HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).GET().build()
					: HttpRequest.newBuilder(uri)
						.timeout(Duration.ofSeconds(10))
						.PUT(HttpRequest.BodyPublishers
							.ofString(("bulk-" + key + "#" + n + "x".repeat(100)).substring(0, 100)))
						.build();
			http.sendAsync(request, HttpResponse.BodyHandlers.discarding()).whenComplete((response, error) -> {
				micros.add((System.nanoTime() - intended) / 1_000);
				synchronized (result) {
					result.count++;
					if (error != null || (response.statusCode() / 100 != 2 && response.statusCode() != 404)) {
						result.errors++;
					}
				}
			});
		}, 0, period, TimeUnit.NANOSECONDS);
		if (during != null) {
			during.run();
		}
		else {
			sleep(limit.toMillis());
		}
		ticker.shutdownNow();
		sleep(2_000);
		result.micros = micros.stream().sorted().toList();
		return result;
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	static final class Join {

		double wallSeconds;

		long keys;

		long bytes;

		long bytesPerSecond;

		long keysPerSecond;

	}

	static final class Latencies {

		long count;

		long errors;

		List<Long> micros = List.of();

		long percentile(double q) {
			return this.micros.isEmpty() ? 0
					: this.micros.get((int) Math.min(this.micros.size() - 1, q * this.micros.size()));
		}

		@Override
		public String toString() {
			return String.format("%d requests, %d errors, p50 %.1f ms, p99 %.1f ms, max %.1f ms", this.count,
					this.errors, percentile(0.5) / 1000.0, percentile(0.99) / 1000.0,
					this.micros.isEmpty() ? 0 : this.micros.getLast() / 1000.0);
		}

	}

}
