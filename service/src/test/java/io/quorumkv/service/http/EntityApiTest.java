package io.quorumkv.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.QuorumKvApplication;
import io.quorumkv.service.config.HttpProperties;
import io.quorumkv.service.support.StreamCalls;
import io.quorumkv.storage.Entry;
import io.quorumkv.service.support.TestClients;
import io.quorumkv.service.support.RawHttp;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;
import reactor.netty.http.client.HttpClient;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.micrometer.metrics.test.autoconfigure.AutoConfigureMetrics;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The public API of DESIGN §2 against a real node on a random port: every request and
 * every error case.
 */
@SpringBootTest(classes = QuorumKvApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "quorumkv.http.max-body-size=2MB", "quorumkv.http.max-key-size=1KB" })
@AutoConfigureMetrics
// The context closes with the class, before JUnit deletes its static data folder; cached,
// it would close at JVM exit into a deleted folder (H2 then re-creates it for its trace
// file).
@DirtiesContext
class EntityApiTest {

	@TempDir
	static Path data;

	@DynamicPropertySource
	static void storage(DynamicPropertyRegistry registry) {
		registry.add("quorumkv.storage.path", () -> data.resolve("node").toString());
	}

	@LocalServerPort
	int port;

	@Autowired
	RequestMetrics metrics;

	@Autowired
	MeterRegistry meters;

	@Autowired
	HttpProperties properties;

	WebTestClient client;

	@BeforeEach
	void client() {
		this.client = TestClients.forPort(this.port);
	}

	/** The URI exactly as written: the test client must not encode it again. */
	private URI uri(String pathAndRawQuery) {
		return URI.create("http://127.0.0.1:" + this.port + pathAndRawQuery);
	}

	private WebTestClient.ResponseSpec put(String rawQuery, byte[] body) {
		return this.client.put().uri(uri("/v0/entity?" + rawQuery)).bodyValue(body).exchange();
	}

	private WebTestClient.ResponseSpec get(String rawQuery) {
		return this.client.get().uri(uri("/v0/entity?" + rawQuery)).exchange();
	}

	private WebTestClient.ResponseSpec delete(String rawQuery) {
		return this.client.delete().uri(uri("/v0/entity?" + rawQuery)).exchange();
	}

	/**
	 * Micrometer's Logback event counter is left out (application.yml): its turbo filter
	 * runs on every logger check of the request path.
	 */
	@Test
	void logEventsAreNotCounted() {
		assertThat(this.meters.find("logback.events").meters()).isEmpty();
		assertThat(this.meters.find("jvm.memory.used").meters()).as("other JVM metrics stay").isNotEmpty();
	}

	@Test
	void statusIsOk() {
		this.client.get().uri("/v0/status").exchange().expectStatus().isOk().expectBody(String.class).isEqualTo("OK\n");
	}

	@Test
	void putGetDeleteRoundTrip() {
		byte[] value = new byte[256];
		for (int i = 0; i < value.length; i++) {
			value[i] = (byte) i;
		}
		put("id=round", value).expectStatus().isCreated();
		get("id=round").expectStatus()
			.isOk()
			.expectHeader()
			.contentType(MediaType.APPLICATION_OCTET_STREAM)
			.expectBody(byte[].class)
			.isEqualTo(value);
		delete("id=round").expectStatus().isAccepted();
		get("id=round").expectStatus().isNotFound();
	}

	@Test
	void overwriteReturnsTheNewValue() {
		put("id=over", bytes("one")).expectStatus().isCreated();
		put("id=over", bytes("two")).expectStatus().isCreated();
		get("id=over").expectBody(String.class).isEqualTo("two");
	}

	@Test
	void emptyBodyIsAnEmptyValueNotADelete() {
		this.client.put().uri(uri("/v0/entity?id=empty")).exchange().expectStatus().isCreated();
		get("id=empty").expectStatus().isOk().expectBody().isEmpty();
	}

	@Test
	void absentKeyIsNotFound() {
		get("id=never-written").expectStatus().isNotFound().expectBody(String.class).isEqualTo("not found\n");
	}

	@Test
	void deleteOfAnAbsentKeyIsAccepted() {
		delete("id=ghost").expectStatus().isAccepted();
		get("id=ghost").expectStatus().isNotFound();
	}

	@Test
	void idIsPercentDecodedOnceAndAnyUnicodeWorks() {
		// "ключ 🔑/%" encoded once; "%2541" must stay the three characters "%41".
		put("id=%D0%BA%D0%BB%D1%8E%D1%87%20%F0%9F%94%91%2F%25", bytes("unicode")).expectStatus().isCreated();
		get("id=%D0%BA%D0%BB%D1%8E%D1%87%20%F0%9F%94%91%2F%25").expectBody(String.class).isEqualTo("unicode");
		put("id=%2541", bytes("literal")).expectStatus().isCreated();
		get("id=%41").expectStatus().isNotFound();
		get("id=%2541").expectBody(String.class).isEqualTo("literal");
		put("id=a+b", bytes("plus")).expectStatus().isCreated();
		get("id=a%2Bb").expectBody(String.class).isEqualTo("plus");
	}

	@Test
	void oneMebibyteValueRoundTrips() {
		byte[] value = new byte[1 << 20];
		new Random(3).nextBytes(value);
		put("id=big", value).expectStatus().isCreated();
		get("id=big").expectStatus().isOk().expectBody(byte[].class).isEqualTo(value);
	}

	@Test
	void replicasWithinTheClusterAreAccepted() {
		put("id=r&replicas=1/1", bytes("v")).expectStatus().isCreated();
		get("id=r&replicas=1/1").expectStatus().isOk();
		get("id=r&ack=1&from=1").expectStatus().isOk();
		get("id=r&ack=1").expectStatus().isOk();
		delete("id=r&replicas=1/1").expectStatus().isAccepted();
	}

	@Test
	void badRequestsAreRefusedWithA400AndAReason() {
		List<String> queries = List.of("", "id=", "foo=bar", "id=a&id=b", "id=%FF%FE", "id=%C3%28", "id=k&replicas=2/1",
				"id=k&replicas=0/1", "id=k&replicas=2/2", "id=k&replicas=1", "id=k&replicas=a/b",
				"id=k&replicas=1/1&ack=1", "id=k&ack=-1", "id=k&from=99999999999", "id=" + "x".repeat(1025));
		for (String query : queries) {
			for (HttpMethod method : List.of(HttpMethod.GET, HttpMethod.PUT, HttpMethod.DELETE)) {
				this.client.method(method)
					.uri(uri("/v0/entity?" + query))
					.exchange()
					.expectStatus()
					.isBadRequest()
					.expectBody(String.class)
					.value((body) -> assertThat(body).as("%s %s", method, query).isNotBlank());
			}
		}
	}

	@Test
	void malformedEscapesAndRawBytesAreA400NotA500() throws Exception {
		List<String> targets = List.of("/v0/entity?id=%zz", "/v0/entity?id=%4", "/v0/entity?id=%", "/v0/entity?id=a%2",
				"/v0/entity?id=a b", "/v0/entity?id=a|b", "/v0/entity?id=\u00ff", "/v0/entity?id=a%00b&replicas=%zz",
				"/v0/entity?id=k&replicas=1%2F1%2F1");
		for (String target : targets) {
			for (String method : List.of("GET", "PUT", "DELETE")) {
				RawHttp.Answer answer = RawHttp.send(this.port, method + " " + target
						+ " HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
				assertThat(answer.status()).as("%s %s -> %s", method, target, answer.head()).isBetween(400, 499);
			}
		}
	}

	@Test
	void internalApiWantsTheClusterSecret() {
		byte[] write = StreamCalls.upsert(Entry.value(bytes("k"), bytes("v"), 1));
		this.client.post()
			.uri(uri(StreamCalls.PATH))
			.bodyValue(write)
			.exchange()
			.expectStatus()
			.isUnauthorized()
			.expectBody(String.class)
			.value((body) -> assertThat(body).contains("missing"));
		// A single node has no secret: nothing can be presented that it accepts.
		this.client.post()
			.uri(uri(StreamCalls.PATH))
			.header("X-QuorumKV-Secret", "guess")
			.bodyValue(write)
			.exchange()
			.expectStatus()
			.isForbidden();
		get("id=k").expectStatus().isNotFound();
		// The scans check the same.
		this.client.get().uri(uri("/internal/v0/entries?start=a")).exchange().expectStatus().isUnauthorized();
	}

	@Test
	void rejectedRequestsChangeNothing() {
		put("id=keep", bytes("kept")).expectStatus().isCreated();
		put("id=keep&replicas=2/1", bytes("changed")).expectStatus().isBadRequest();
		delete("id=keep&replicas=9/9").expectStatus().isBadRequest();
		put("id=keep", new byte[3 << 20]).expectStatus().isEqualTo(HttpStatus.CONTENT_TOO_LARGE);
		get("id=keep").expectBody(String.class).isEqualTo("kept");
	}

	@Test
	void bodyOverTheLimitIs413() {
		put("id=huge", new byte[(2 << 20) + 1]).expectStatus()
			.isEqualTo(HttpStatus.CONTENT_TOO_LARGE)
			.expectBody(String.class)
			.value((body) -> assertThat(body).contains("too large"));
		put("id=limit", new byte[2 << 20]).expectStatus().isCreated();
	}

	@Test
	void chunkedBodyOverTheLimitIs413() {
		// No Content-Length: the limit is enforced while reading.
		Flux<DataBuffer> chunks = Flux.range(0, 40)
			.map((i) -> org.springframework.core.io.buffer.DefaultDataBufferFactory.sharedInstance
				.wrap(new byte[64 * 1024]));
		this.client.put()
			.uri("/v0/entity?id=chunked")
			.body(chunks, DataBuffer.class)
			.exchange()
			.expectStatus()
			.isEqualTo(HttpStatus.CONTENT_TOO_LARGE);
		get("id=chunked").expectStatus().isNotFound();
	}

	@Test
	void otherMethodsOnKnownPathsAre405() {
		this.client.post()
			.uri("/v0/entity?id=x")
			.exchange()
			.expectStatus()
			.isEqualTo(HttpStatus.METHOD_NOT_ALLOWED)
			.expectHeader()
			.valueEquals("Allow", "GET, HEAD, PUT, DELETE");
		this.client.put().uri("/v0/status").exchange().expectStatus().isEqualTo(HttpStatus.METHOD_NOT_ALLOWED);
		this.client.delete()
			.uri("/v0/entities?start=a")
			.exchange()
			.expectStatus()
			.isEqualTo(HttpStatus.METHOD_NOT_ALLOWED);
		this.client.patch().uri("/v0/entity?id=x").exchange().expectStatus().isEqualTo(HttpStatus.METHOD_NOT_ALLOWED);
	}

	@Test
	void unknownPathsAre404() {
		this.client.get().uri("/v1/entity?id=x").exchange().expectStatus().isNotFound();
		this.client.get().uri("/v0/entity/extra?id=x").exchange().expectStatus().isNotFound();
		this.client.get().uri("/").exchange().expectStatus().isNotFound();
	}

	@Test
	void rangeStreamsLiveRecordsInKeyOrder() {
		for (String key : List.of("r-a", "r-b", "r-c", "r-d", "r-e")) {
			put("id=" + key, bytes("v" + key)).expectStatus().isCreated();
		}
		delete("id=r-c").expectStatus().isAccepted();
		this.client.get()
			.uri("/v0/entities?start=r-b&end=r-e")
			.accept(MediaType.APPLICATION_OCTET_STREAM)
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("Transfer-Encoding", "chunked")
			.expectBody(String.class)
			.isEqualTo("r-b\nvr-br-d\nvr-d");
		this.client.get()
			.uri("/v0/entities?start=r-d")
			.accept(MediaType.APPLICATION_OCTET_STREAM)
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.value((body) -> assertThat(body).startsWith("r-d\nvr-dr-e\nvr-e"));
		this.client.get().uri("/v0/entities").exchange().expectStatus().isBadRequest();
		// An empty bound is an open end (docs/api.md): start= is the first key.
		this.client.get().uri("/v0/entities?start=").exchange().expectStatus().isOk();
		this.client.get().uri("/v0/entities?start=z&end=a").exchange().expectStatus().isOk().expectBody().isEmpty();
	}

	/**
	 * Every byte of a range of 5,000 records (about 130 KB) arrives;
	 * {@code -Pfaults-long} streams 20,000 (about 540 KB).
	 */
	@Test
	void largeRangeIsStreamedInChunks() {
		int count = Boolean.getBoolean("quorumkv.faults.long") ? 20_000 : 5_000;
		Flux.range(0, count)
			.flatMap((i) -> this.client.put()
				.uri("/v0/entity?id=big-range-" + String.format("%06d", i))
				.bodyValue(bytes("value-" + i))
				.exchange()
				.returnResult(Void.class)
				.getResponseBody()
				.then(), 16)
			.blockLast(Duration.ofSeconds(120));
		// Count chunks on the wire with a raw client: one per record.
		List<Integer> chunkSizes = new ArrayList<>();
		HttpClient.create()
			.headers((headers) -> headers.set(HttpHeaders.ACCEPT, MediaType.APPLICATION_OCTET_STREAM_VALUE))
			.get()
			.uri("http://127.0.0.1:" + this.port + "/v0/entities?start=big-range-&end=big-range.")
			.responseContent()
			.asByteArray()
			.doOnNext((chunk) -> chunkSizes.add(chunk.length))
			.blockLast(Duration.ofSeconds(120));
		long total = chunkSizes.stream().mapToLong(Integer::longValue).sum();
		long expected = 0;
		for (int i = 0; i < count; i++) {
			expected += ("big-range-" + String.format("%06d", i)).length() + 1 + ("value-" + i).length();
		}
		assertThat(total).isEqualTo(expected);
	}

	@Test
	void requestsAreTimedByOperationAndStatus() {
		get("id=metrics-absent").expectStatus().isNotFound();
		this.client.get()
			.uri("/actuator/metrics/quorumkv.requests?tag=op:get&tag=status:404")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.value((body) -> assertThat(body).contains("\"COUNT\""));
	}

	@Test
	void actuatorExposesHealthMetricsAndPrometheusOnly() {
		this.client.get()
			.uri("/actuator/health")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			// Details (the storage's, the disk's path) only for an admin credential
			// (security.AdminAccessTest).
			.value((body) -> assertThat(body).contains("\"UP\"").doesNotContain("\"storage\""));
		this.client.get()
			.uri("/actuator/prometheus")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.value((body) -> assertThat(body).contains("quorumkv_requests"));
		this.client.get().uri("/actuator/env").exchange().expectStatus().isNotFound();
		this.client.get().uri("/actuator/beans").exchange().expectStatus().isNotFound();
	}

	@Test
	void getAnswersTheVersionAsAnETagAndIfNoneMatchWithItIsA304() {
		put("id=versioned", bytes("one")).expectStatus().isCreated();
		String first = get("id=versioned").expectStatus()
			.isOk()
			.expectHeader()
			.exists("ETag")
			.returnResult(byte[].class)
			.getResponseHeaders()
			.getETag();
		assertThat(first).matches("\"[0-9a-f]+\"");
		this.client.get()
			.uri("/v0/entity?id=versioned")
			.header("If-None-Match", first)
			.exchange()
			.expectStatus()
			.isNotModified()
			.expectHeader()
			.valueEquals("ETag", first)
			.expectBody()
			.isEmpty();
		this.client.get()
			.uri("/v0/entity?id=versioned")
			.header("If-None-Match", "\"0\", W/" + first)
			.exchange()
			.expectStatus()
			.isNotModified();
		this.client.get()
			.uri("/v0/entity?id=versioned")
			.header("If-None-Match", "\"0\"")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.isEqualTo("one");
		put("id=versioned", bytes("two")).expectStatus().isCreated();
		String second = this.client.get()
			.uri("/v0/entity?id=versioned")
			.header("If-None-Match", first)
			.exchange()
			.expectStatus()
			.isOk()
			.returnResult(byte[].class)
			.getResponseHeaders()
			.getETag();
		assertThat(second).isNotEqualTo(first);
		delete("id=versioned").expectStatus().isAccepted();
		this.client.get()
			.uri("/v0/entity?id=versioned")
			.header("If-None-Match", second)
			.exchange()
			.expectStatus()
			.isNotFound()
			.expectHeader()
			.doesNotExist("ETag");
	}

	@Test
	void ndjsonRangeCarriesAnyBytesAndTheVersions() {
		byte[][] values = { bytes("line one\nline two"), bytes("cr\r\nlf"), new byte[] { 0, 10, 13, 0, (byte) 0xff },
				new byte[0] };
		for (int i = 0; i < values.length; i++) {
			put("id=nd-" + i, values[i]).expectStatus().isCreated();
		}
		put("id=nd-%0A", bytes("key with a newline")).expectStatus().isCreated();
		String body = this.client.get()
			.uri("/v0/entities?start=nd-&end=nd.")
			.accept(MediaType.APPLICATION_NDJSON)
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.contentTypeCompatibleWith(MediaType.APPLICATION_NDJSON)
			.expectBody(String.class)
			.returnResult()
			.getResponseBody();
		List<String> lines = body.lines().toList();
		assertThat(lines).hasSize(values.length + 1);
		java.util.Base64.Decoder base64 = java.util.Base64.getDecoder();
		java.util.regex.Pattern record = java.util.regex.Pattern
			.compile("\\{\"key\":\"([^\"]*)\",\"value\":\"([^\"]*)\",\"version\":\"([0-9a-f]+)\"}");
		List<String> keys = new ArrayList<>();
		for (String line : lines) {
			java.util.regex.Matcher matcher = record.matcher(line);
			assertThat(matcher.matches()).as(line).isTrue();
			String key = new String(base64.decode(matcher.group(1)), StandardCharsets.UTF_8);
			keys.add(key);
			byte[] value = base64.decode(matcher.group(2));
			if (key.equals("nd-\n")) {
				assertThat(value).isEqualTo(bytes("key with a newline"));
			}
			else {
				assertThat(value).isEqualTo(values[Integer.parseInt(key.substring(3))]);
			}
			String etag = get("id=" + java.net.URLEncoder.encode(key, StandardCharsets.UTF_8).replace("+", "%20"))
				.returnResult(byte[].class)
				.getResponseHeaders()
				.getETag();
			assertThat(etag).isEqualTo("\"" + matcher.group(3) + "\"");
		}
		assertThat(keys).containsExactly("nd-\n", "nd-0", "nd-1", "nd-2", "nd-3");
	}

	@Test
	void aRangePagesThroughWithLimitAndAfter() {
		List<String> written = new ArrayList<>();
		for (int i = 0; i < 250; i++) {
			String key = String.format("page-%03d", i);
			put("id=" + key, bytes("v" + i)).expectStatus().isCreated();
			written.add(key);
		}
		delete("id=page-100").expectStatus().isAccepted();
		written.remove("page-100");
		List<String> seen = new ArrayList<>();
		String query = "start=page-";
		for (int page = 0; page < 10; page++) {
			String body = this.client.get()
				.uri("/v0/entities?" + query + "&end=page.&limit=40")
				.accept(MediaType.APPLICATION_NDJSON)
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody(String.class)
				.returnResult()
				.getResponseBody();
			List<String> keys = (body == null) ? List.of() : body.lines()
				.map((line) -> new String(java.util.Base64.getDecoder().decode(line.substring(8, line.indexOf('"', 8))),
						StandardCharsets.UTF_8))
				.toList();
			assertThat(keys.size()).isLessThanOrEqualTo(40);
			seen.addAll(keys);
			if (keys.size() < 40) {
				break;
			}
			query = "after=" + keys.get(keys.size() - 1);
		}
		assertThat(seen).isEqualTo(written);
	}

	@Test
	void badRangeParametersAre400() {
		for (String query : List.of("start=a&after=b", "end=b", "start=a&limit=0", "start=a&limit=-1",
				"start=a&limit=ten", "start=a&limit=1000000001", "start=a&limit=", "start=a&replicas=4/3",
				"start=&after=")) {
			this.client.get().uri("/v0/entities?" + query).exchange().expectStatus().isBadRequest();
		}
	}

	private static byte[] bytes(String s) {
		return s.getBytes(StandardCharsets.UTF_8);
	}

}
