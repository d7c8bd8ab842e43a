package io.quorumkv.service.ops;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ApplicationListener;
import org.springframework.http.HttpMethod;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The training run of an AOT cache (Java 25, {@code -XX:AOTCacheOutput}) that serves
 * requests. With {@code quorumkv.aot-training=true} the node, once ready, sends a short
 * workload through its own front door (writes, reads of present and absent keys, a range,
 * deletes, the status page) and exits, so that the cache the JVM writes at exit holds the
 * classes and method profiles of serving and not only those of starting: a node restarted
 * from a cache trained only to the end of the context refresh spent 0.9 s answering its
 * first request (docs/performance.md, Recovery). The run's keys stay in the training
 * run's own data folder, which is thrown away.
 */
@Component
@ConditionalOnBooleanProperty("quorumkv.aot-training")
class AotTraining implements ApplicationListener<ApplicationReadyEvent> {

	private static final Log logger = LogFactory.getLog(AotTraining.class);

	/**
	 * Keys written, read and deleted: enough for the JIT's first tiers to see the paths.
	 */
	static final int KEYS = 2_000;

	private static final int CONCURRENCY = 16;

	private static final Duration TIMEOUT = Duration.ofMinutes(2);

	@Override
	public void onApplicationEvent(ApplicationReadyEvent event) {
		WebServerApplicationContext context = (WebServerApplicationContext) event.getApplicationContext();
		String base = "http://127.0.0.1:" + context.getWebServer().getPort();
		int status = 0;
		try {
			Map<String, Integer> answers = exercise(WebClient.create(base), KEYS).block(TIMEOUT);
			logger.info("AOT training run: " + answers + " through " + base + "; exiting");
		}
		catch (RuntimeException ex) {
			logger.error("AOT training run failed; exiting without a usable profile of serving", ex);
			status = 1;
		}
		int exitStatus = status;
		System.exit(SpringApplication.exit(event.getApplicationContext(), () -> exitStatus));
	}

	/**
	 * Sends the training workload: for each of {@code keys} keys a PUT, a GET of it and a
	 * GET of a key never written; then a range over them, the status page and a DELETE of
	 * every key followed by a GET of it.
	 * @return the count of answers by method and status, such as {@code "PUT 201"}
	 * @throws IllegalStateException if any answer is not the one a healthy node gives
	 */
	static Mono<Map<String, Integer>> exercise(WebClient client, int keys) {
		Map<String, Integer> answers = new TreeMap<>();
		List<Mono<Void>> phases = new ArrayList<>();
		phases.add(
				Flux.range(0, keys)
					.flatMap((i) -> call(client, HttpMethod.PUT, "/v0/entity?id=aot-training-" + i, 201, answers)
						.then(call(client, HttpMethod.GET, "/v0/entity?id=aot-training-" + i, 200, answers))
						.then(call(client, HttpMethod.GET, "/v0/entity?id=aot-training-absent-" + i, 404, answers)),
							CONCURRENCY)
					.then());
		phases.add(call(client, HttpMethod.GET, "/v0/entities?start=aot-training-&end=aot-training.", 200, answers));
		phases.add(call(client, HttpMethod.GET, "/v0/status", 200, answers));
		phases.add(Flux.range(0, keys)
			.flatMap(
					(i) -> call(client, HttpMethod.DELETE, "/v0/entity?id=aot-training-" + i, 202, answers)
						.then(call(client, HttpMethod.GET, "/v0/entity?id=aot-training-" + i, 404, answers)),
					CONCURRENCY)
			.then());
		return Flux.concat(phases).then(Mono.fromSupplier(() -> answers));
	}

	private static Mono<Void> call(WebClient client, HttpMethod method, String uri, int expected,
			Map<String, Integer> answers) {
		WebClient.RequestBodySpec request = client.method(method).uri(uri);
		WebClient.RequestHeadersSpec<?> spec = (method == HttpMethod.PUT)
				? request.bodyValue(("value of " + uri).getBytes(StandardCharsets.UTF_8)) : request;
		return spec.exchangeToMono((response) -> response.releaseBody().thenReturn(response.statusCode().value()))
			.map((status) -> {
				if (status != expected) {
					throw new IllegalStateException(method + " " + uri + " answered " + status + ", not " + expected);
				}
				synchronized (answers) {
					answers.merge(method + " " + status, 1, Integer::sum);
				}
				return status;
			})
			.then();
	}

}
