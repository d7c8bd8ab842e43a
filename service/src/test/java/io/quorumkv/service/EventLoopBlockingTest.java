package io.quorumkv.service;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

import io.quorumkv.service.support.TestCluster;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.blockhound.BlockHound;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.web.reactive.function.client.WebClient;

/**
 * No blocking call on an event loop (or any other non-blocking thread), on any path a
 * request takes: public API, coordinator, batched replica calls, replica side, storage,
 * hints, metrics. BlockHound instruments the JDK's blocking methods (sleeps, waits,
 * parks, file and socket I/O) and reports every such call made on a non-blocking thread;
 * the test drives a three-node cluster per backend and fails on any report.
 *
 * <p>
 * Two short waits are allowed, deliberately, and documented in docs/performance.md: the
 * LSM's WAL append ({@code WalWriter.append}, and {@code appendAll} for a replica's
 * batch: a leader/follower group write of the queued records into the page cache, under a
 * lock held for that write only; no fsync, which runs on the syncer thread), and handing
 * a task to a bounded worker pool ({@code ThreadPoolExecutor.execute}, whose queue insert
 * takes a lock; the H2 and Derby backends and the hint store run their JDBC/R2DBC work on
 * such pools). And one in a library: Resilience4j's circuit breaker records each call's
 * outcome in its sliding window under a lock. And one in Netty itself: its adaptive
 * buffer allocator takes a {@code StampedLock} when it grows its set of magazines under
 * contention (seen once in CI, in Netty's own read path, not after any QuorumKV code;
 * Netty 4.2.18's BlockHound integration does not list it). Anything else fails the test.
 *
 * <p>
 * Runs in a JVM of its own (see the service's pom): BlockHound cannot be uninstalled.
 */
class EventLoopBlockingTest {

	private static final List<String> blockingCalls = new CopyOnWriteArrayList<>();

	@TempDir
	Path root;

	@BeforeAll
	static void installBlockHound() {
		BlockHound.builder()
			.loadIntegrations()
			.allowBlockingCallsInside("io.quorumkv.storage.lsm.wal.WalWriter", "append")
			.allowBlockingCallsInside("io.quorumkv.storage.lsm.wal.WalWriter", "appendAll")
			.allowBlockingCallsInside("java.util.concurrent.ThreadPoolExecutor", "execute")
			.allowBlockingCallsInside("io.github.resilience4j.core.metrics.FixedSizeSlidingWindowMetrics", "record")
			.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "tryExpandMagazines")
			.blockingMethodCallback((method) -> blockingCalls
				.add(method + " on " + Thread.currentThread().getName() + "\n" + stack(new Exception("blocking call"))))
			.install();
		// The detector itself must work here, or the test proves nothing.
		Mono.fromRunnable(() -> {
			try {
				Thread.sleep(1);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}).subscribeOn(Schedulers.parallel()).block();
		assertThat(blockingCalls).as("BlockHound sees a sleep on a parallel thread").hasSize(1);
		blockingCalls.clear();
	}

	@ParameterizedTest
	@ValueSource(strings = { "lsm", "h2", "derby" })
	void noRequestPathBlocksANonBlockingThread(String backend) {
		blockingCalls.clear();
		try (TestCluster cluster = new TestCluster(this.root.resolve(backend), 3,
				Map.of("quorumkv.storage.backend", backend))
			.startAll()) {
			WebClient client = WebClient.create(cluster.url(0));
			Flux.range(0, 400).flatMap((i) -> {
				String key = "k" + (i % 100);
				String replicas = List.of("2/3", "3/3", "1/3", "1/1").get(i % 4);
				Mono<?> request = switch (i % 3) {
					case 0 -> client.put()
						.uri("/v0/entity?id={key}&replicas={replicas}", key, replicas)
						.bodyValue(("value-" + i).getBytes(StandardCharsets.UTF_8))
						.retrieve()
						.toBodilessEntity();
					case 1 -> client.get()
						.uri("/v0/entity?id={key}&replicas={replicas}", key, replicas)
						.exchangeToMono((response) -> response.releaseBody().thenReturn(response.statusCode()));
					default -> client.delete()
						.uri("/v0/entity?id={key}&replicas={replicas}", key, replicas)
						.retrieve()
						.toBodilessEntity();
				};
				return request;
			}, 32).blockLast(Duration.ofSeconds(120));
			client.get().uri("/v0/entities?start=k").retrieve().bodyToMono(byte[].class).block(Duration.ofSeconds(30));
			client.get().uri("/actuator/prometheus").retrieve().bodyToMono(String.class).block(Duration.ofSeconds(30));
		}
		assertThat(blockingCalls).as("blocking calls on non-blocking threads").isEmpty();
	}

	private static String stack(Throwable trace) {
		List<String> frames = new ArrayList<>();
		for (StackTraceElement frame : trace.getStackTrace()) {
			frames.add("\tat " + frame);
		}
		return frames.stream().limit(40).collect(Collectors.joining("\n"));
	}

}
