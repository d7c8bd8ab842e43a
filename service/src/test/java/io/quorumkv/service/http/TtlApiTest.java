package io.quorumkv.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;

import io.quorumkv.service.QuorumKvApplication;
import io.quorumkv.service.support.TestClients;
import io.quorumkv.storage.contract.ManualClock;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.bean.override.convention.TestBean;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * {@code PUT /v0/entity?ttl=SECONDS} against a real node whose clock the test moves (the
 * node's {@code Clock} bean, which its hybrid logical clock and its storage read): the
 * value reads until its expiry, then is absent from reads and scans; bad values are a
 * 400.
 */
@SpringBootTest(classes = QuorumKvApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT)
@DirtiesContext
class TtlApiTest {

	static final ManualClock CLOCK = ManualClock.startingAt(Instant.now().truncatedTo(ChronoUnit.SECONDS));

	@TempDir
	static Path data;

	@DynamicPropertySource
	static void storage(DynamicPropertyRegistry registry) {
		registry.add("quorumkv.storage.path", () -> data.resolve("node").toString());
	}

	/** The node's clock. */
	@TestBean
	Clock clock;

	static Clock clock() {
		return CLOCK;
	}

	@LocalServerPort
	int port;

	WebTestClient client;

	@BeforeEach
	void client() {
		this.client = TestClients.forPort(this.port);
	}

	private URI uri(String pathAndRawQuery) {
		return URI.create("http://127.0.0.1:" + this.port + pathAndRawQuery);
	}

	private WebTestClient.ResponseSpec put(String rawQuery, String body) {
		return this.client.put()
			.uri(uri("/v0/entity?" + rawQuery))
			.bodyValue(body.getBytes(StandardCharsets.UTF_8))
			.exchange();
	}

	private WebTestClient.ResponseSpec get(String rawQuery) {
		return this.client.get().uri(uri("/v0/entity?" + rawQuery)).exchange();
	}

	private String scan(String start, String end) {
		return this.client.get()
			.uri(uri("/v0/entities?start=" + start + "&end=" + end))
			.accept(MediaType.APPLICATION_OCTET_STREAM)
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.returnResult()
			.getResponseBody();
	}

	@Test
	void aValueWithATtlReadsUntilItsExpiryThenIsAbsentFromReadsAndScans() {
		put("id=ttl-a&ttl=60", "short").expectStatus().isCreated();
		put("id=ttl-b&ttl=3600", "long").expectStatus().isCreated();
		put("id=ttl-c", "plain").expectStatus().isCreated();
		String etag = get("id=ttl-a").expectStatus()
			.isOk()
			.expectBody(String.class)
			.isEqualTo("short")
			.returnResult()
			.getResponseHeaders()
			.getETag();
		assertThat(etag).isNotNull();
		assertThat(scan("ttl-", "ttl.")).isEqualTo("ttl-a\nshortttl-b\nlongttl-c\nplain");
		CLOCK.advance(Duration.ofSeconds(58));
		get("id=ttl-a").expectStatus().isOk();
		CLOCK.advance(Duration.ofSeconds(3));
		get("id=ttl-a").expectStatus().isNotFound();
		this.client.get()
			.uri(uri("/v0/entity?id=ttl-a"))
			.header("If-None-Match", etag)
			.exchange()
			.expectStatus()
			.isNotFound();
		get("id=ttl-b").expectStatus().isOk().expectBody(String.class).isEqualTo("long");
		assertThat(scan("ttl-", "ttl.")).isEqualTo("ttl-b\nlongttl-c\nplain");
		CLOCK.advance(Duration.ofSeconds(3600));
		get("id=ttl-b").expectStatus().isNotFound();
		get("id=ttl-c").expectStatus().isOk();
		assertThat(scan("ttl-", "ttl.")).isEqualTo("ttl-c\nplain");
	}

	@Test
	void theExpiryRidesWithTheLatestWrite() {
		put("id=rides&ttl=10", "first").expectStatus().isCreated();
		put("id=rides", "second").expectStatus().isCreated();
		CLOCK.advance(Duration.ofSeconds(11));
		get("id=rides").expectStatus().isOk().expectBody(String.class).isEqualTo("second");
		put("id=rides&ttl=5", "third").expectStatus().isCreated();
		CLOCK.advance(Duration.ofSeconds(6));
		get("id=rides").expectStatus().isNotFound();
		put("id=rides", "again").expectStatus().isCreated();
		get("id=rides").expectStatus().isOk().expectBody(String.class).isEqualTo("again");
	}

	@Test
	void aBadTtlIsA400WithAReason() {
		List<String> bad = List.of("", "0", "-1", "+5", "%205", "5%20", "1.5", "1e3", "abc", "0x10", "315360001",
				"99999999999", "9223372036854775808", "99999999999999999999999999", "5&ttl=6");
		for (String ttl : bad) {
			this.client.method(HttpMethod.PUT)
				.uri(uri("/v0/entity?id=bad&ttl=" + ttl))
				.bodyValue("v".getBytes(StandardCharsets.UTF_8))
				.exchange()
				.expectStatus()
				.isBadRequest()
				.expectBody(String.class)
				.value((body) -> assertThat(body).as("ttl=%s", ttl).contains("ttl"));
		}
		get("id=bad").expectStatus().isNotFound();
		put("id=bad&ttl=315360000", "ten years").expectStatus().isCreated();
		put("id=one&ttl=1", "a second").expectStatus().isCreated();
	}

	@Test
	void aDeleteWithATtlIsA400AndDeletesNothing() {
		put("id=kept", "v").expectStatus().isCreated();
		for (String ttl : List.of("60", "1", "", "0", "-1", "abc", "99999999999")) {
			this.client.method(HttpMethod.DELETE)
				.uri(uri("/v0/entity?id=kept&ttl=" + ttl))
				.exchange()
				.expectStatus()
				.isBadRequest()
				.expectBody(String.class)
				.value((body) -> assertThat(body).as("ttl=%s", ttl).contains("ttl").contains("DELETE"));
		}
		get("id=kept").expectStatus().isOk().expectBody(String.class).isEqualTo("v");
		this.client.method(HttpMethod.DELETE).uri(uri("/v0/entity?id=kept")).exchange().expectStatus().isAccepted();
		get("id=kept").expectStatus().isNotFound();
	}

}
