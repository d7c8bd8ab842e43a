package io.quorumkv.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quorumkv.service.cluster.ClockGuard;
import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.config.HttpProperties;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.contract.ModelStorage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.http.HttpMethod;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.reactive.function.server.HandlerStrategies;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * A replica's side of a page of a range read ({@link InternalHandler#scan}): at most
 * {@code limit} entries, tombstones included, and a 400 for a limit that is not a
 * positive integer.
 */
class InternalScanTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private static final int MAX_KEY = 16;

	private final ModelStorage storage = ModelStorage.inMemory();

	private final InternalHandler handler = new InternalHandler(this.storage,
			new Binder(new MapConfigurationPropertySource(Map.of("quorumkv.http.max-key-size", MAX_KEY + "B")))
				.bindOrCreate("quorumkv.http", HttpProperties.class));

	@BeforeEach
	void fill() {
		for (int i = 0; i < 20; i++) {
			Entry entry = (i % 5 == 0) ? Entry.tombstone(key("k" + (10 + i)), i)
					: Entry.value(key("k" + (10 + i)), key("v" + i), i);
			this.storage.upsert(entry).block(TIMEOUT);
		}
	}

	@AfterEach
	void close() {
		this.storage.close();
	}

	@Test
	void answersAtMostTheLimitTombstonesIncluded() {
		Answer page = scan("?start=k10&limit=7");
		assertThat(page.status()).isEqualTo(200);
		assertThat(keys(page.body())).containsExactly("k10", "k11", "k12", "k13", "k14", "k15", "k16");
		assertThat(keys(scan("?start=k25&end=k28&limit=7").body())).containsExactly("k25", "k26", "k27");
		assertThat(keys(scan("?start=k10").body())).hasSize(20);
	}

	@Test
	void aLimitThatIsNotAPositiveIntegerIsA400() {
		for (String limit : List.of("0", "-1", "abc", "", "1.5", "%2B1", "1000000001", "99999999999")) {
			Answer answer = scan("?start=k10&limit=" + limit);
			assertThat(answer.status()).as("limit=%s", limit).isEqualTo(400);
			assertThat(new String(answer.body(), StandardCharsets.UTF_8)).contains("limit");
		}
		assertThat(scan("?start=k10&limit=1&limit=2").status()).isEqualTo(400);
	}

	@Test
	void aPageMayStartAfterAKeyOfTheLargestSize() {
		String largest = "k".repeat(MAX_KEY);
		this.storage.upsert(Entry.value(key(largest + "x"), key("v"), 1)).block(TIMEOUT);
		// The page after a key of the largest size starts at that key plus a zero byte.
		Answer page = scan("?start=" + largest + "%00&limit=5");
		assertThat(page.status()).as(new String(page.body(), StandardCharsets.UTF_8)).isEqualTo(200);
		assertThat(keys(page.body())).containsExactly(largest + "x");
		assertThat(scan("?start=" + largest + "xy&limit=5").status()).isEqualTo(400);
	}

	private Answer scan(String query) {
		MockServerWebExchange exchange = MockServerWebExchange
			.from(MockServerHttpRequest.method(HttpMethod.GET, URI.create(InternalApi.ENTRIES_PATH + query)));
		ServerRequest request = ServerRequest.create(exchange, HandlerStrategies.withDefaults().messageReaders());
		ServerResponse response = this.handler.scan(request).block(TIMEOUT);
		assertThat(response).isNotNull();
		response.writeTo(exchange, new ServerResponse.Context() {

			@Override
			public List<org.springframework.http.codec.HttpMessageWriter<?>> messageWriters() {
				return HandlerStrategies.withDefaults().messageWriters();
			}

			@Override
			public List<org.springframework.web.reactive.result.view.ViewResolver> viewResolvers() {
				return List.of();
			}

		}).block(TIMEOUT);
		byte[] body = exchange.getResponse()
			.getBody()
			.reduce(new byte[0], (joined, buffer) -> concat(joined, buffer.toByteBuffer()))
			.block(TIMEOUT);
		return new Answer(response.statusCode().value(), (body != null) ? body : new byte[0]);
	}

	private static byte[] concat(byte[] joined, java.nio.ByteBuffer next) {
		byte[] out = java.util.Arrays.copyOf(joined, joined.length + next.remaining());
		next.get(out, joined.length, next.remaining());
		return out;
	}

	/** The keys of a stream of scan frames ({@link InternalApi#encode}). */
	private static List<String> keys(byte[] frames) {
		java.nio.ByteBuffer buffer = java.nio.ByteBuffer.wrap(frames);
		List<String> keys = new ArrayList<>();
		while (buffer.hasRemaining()) {
			byte[] key = new byte[buffer.getInt()];
			buffer.get(key);
			buffer.getLong();
			int valueLength = buffer.getInt();
			buffer.position(buffer.position() + Math.max(valueLength, 0));
			keys.add(new String(key, StandardCharsets.UTF_8));
		}
		return keys;
	}

	private static byte[] key(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	private record Answer(int status, byte[] body) {
	}

}
