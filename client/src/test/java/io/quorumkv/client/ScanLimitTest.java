package io.quorumkv.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * A scan with a limit asks no page for more records than are still wanted: against a bare
 * server holding {@link #KEYS} records, which notes the {@code limit} of every page.
 */
class ScanLimitTest {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final int KEYS = 600;

	private final TreeMap<String, String> records = new TreeMap<>();

	private final Queue<String> limits = new ConcurrentLinkedQueue<>();

	private DisposableServer server;

	private QuorumKvClient client;

	@BeforeEach
	void start() {
		for (int i = 0; i < KEYS; i++) {
			this.records.put("k%04d".formatted(i), "v" + i);
		}
		this.server = HttpServer.create().host("127.0.0.1").port(0).handle((request, response) -> {
			if (!request.uri().startsWith("/v0/entities?")) {
				return response.status(404).send();
			}
			Map<String, String> query = query(URI.create(request.uri()).getRawQuery());
			this.limits.add(query.get("limit"));
			String start = query.get("start");
			var page = (start != null) ? this.records.tailMap(start, true)
					: this.records.tailMap(query.get("after"), false);
			String body = page.entrySet()
				.stream()
				.limit(Integer.parseInt(query.get("limit")))
				.map((record) -> "{\"key\":\"" + base64(record.getKey()) + "\",\"value\":\"" + base64(record.getValue())
						+ "\",\"version\":\"1\"}\n")
				.collect(Collectors.joining());
			return response.header("Content-Type", "application/x-ndjson").sendString(Flux.just(body)).then();
		}).bindNow();
		this.client = QuorumKvClient.builder()
			.seeds(List.of(URI.create("http://127.0.0.1:" + this.server.port())))
			.build();
	}

	@AfterEach
	void stop() {
		this.client.close();
		this.server.disposeNow();
	}

	@Test
	void pagesAskForWhatIsStillWanted() {
		assertThat(this.client.scan("k", null, 300).collectList().block(WAIT)).hasSize(300)
			.last()
			.extracting(KeyValue::key)
			.isEqualTo("k0299");
		assertThat(this.limits).containsExactly("256", "44");
		this.limits.clear();
		assertThat(this.client.blocking().scan("k0010", "k1", 10)).extracting(KeyValue::key)
			.containsExactly("k0010", "k0011", "k0012", "k0013", "k0014", "k0015", "k0016", "k0017", "k0018", "k0019");
		assertThat(this.limits).containsExactly("10");
		this.limits.clear();
		// A range shorter than the limit ends at its short page.
		assertThat(this.client.scan("k0590", null, 100).collectList().block(WAIT)).hasSize(10);
		assertThat(this.limits).containsExactly("100");
	}

	@Test
	void withoutALimitPagesAreWholeAndAZeroLimitSendsNothing() {
		assertThat(this.client.scan("k", null).collectList().block(WAIT)).hasSize(KEYS);
		assertThat(this.limits).containsExactly("256", "256", "256");
		this.limits.clear();
		assertThat(this.client.blocking().scan("k", null, 0)).isEmpty();
		assertThat(this.limits).isEmpty();
		assertThatIllegalArgumentException().isThrownBy(() -> this.client.scan("k", null, 0));
	}

	private static Map<String, String> query(String raw) {
		return java.util.Arrays.stream(raw.split("&"))
			.map((pair) -> pair.split("=", 2))
			.collect(Collectors.toMap((pair) -> pair[0],
					(pair) -> java.net.URLDecoder.decode(pair[1], StandardCharsets.UTF_8)));
	}

	private static String base64(String text) {
		return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
	}

}
