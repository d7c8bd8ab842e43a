package io.quorumkv.client;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** The client's parts that need no node: encoding, routing, budget, settings. */
class ClientPartsTest {

	private static final URI A = URI.create("http://127.0.0.1:1");

	private static final URI B = URI.create("http://127.0.0.1:2");

	private static final URI C = URI.create("http://127.0.0.1:3");

	@Test
	void keysArePercentEncodedOnceAsUtf8() {
		assertThat(Requests.entity("a b+c&d=%/ключ".getBytes(StandardCharsets.UTF_8), Replicas.of(2, 3)))
			.isEqualTo("/v0/entity?id=a%20b%2Bc%26d%3D%25%2F%D0%BA%D0%BB%D1%8E%D1%87&replicas=2/3");
		assertThat(Requests.entity(new byte[] { 'A', 'z', '0', '-', '.', '_', '~', 0 }, null))
			.isEqualTo("/v0/entity?id=Az0-._~%00");
		assertThat(Requests.range("a".getBytes(StandardCharsets.UTF_8), true, null, 10))
			.isEqualTo("/v0/entities?start=a&limit=10");
		assertThat(Requests.range("a".getBytes(StandardCharsets.UTF_8), false, "b c".getBytes(StandardCharsets.UTF_8),
				256))
			.isEqualTo("/v0/entities?after=a&end=b%20c&limit=256");
		assertThatIllegalArgumentException().isThrownBy(() -> Requests.utf8("key", ""));
		assertThatIllegalArgumentException().isThrownBy(() -> Requests.utf8("key", "\uDC00"));
	}

	@Test
	void aSeedWithoutASchemeIsRefusedNamingItAndTheExpectedForm() {
		for (String seed : List.of("127.0.0.1:8081", "localhost:8081", "node-1.example:8080", "127.0.0.1", "::1")) {
			assertThatIllegalArgumentException().as(seed)
				.isThrownBy(() -> QuorumKvClient.builder().seeds("http://127.0.0.1:1", seed))
				.withMessageContaining("'" + seed + "'")
				.withMessageContaining("http://host:port");
		}
		assertThatIllegalArgumentException().isThrownBy(() -> QuorumKvClient.builder().seeds("http://a b:1"))
			.withMessageContaining("'http://a b:1'")
			.withMessageContaining("http://host:port");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> QuorumKvClient.builder().seeds(List.of(URI.create("localhost:8081"))).build())
			.withMessageContaining("'localhost:8081'")
			.withMessageContaining("http://host:port");
	}

	@Test
	void aVersionIsTheHexTimestampOfAStrongETag() {
		assertThat(VersionedValue.parseEtag("\"5f3a2c1b9d0e4\"")).isEqualTo(0x5f3a2c1b9d0e4L);
		assertThat(new VersionedValue(new byte[0], 0x5f3a2c1b9d0e4L).etag()).isEqualTo("\"5f3a2c1b9d0e4\"");
		for (String bad : List.of("5f3a", "W/\"5f3a\"", "\"\"", "\"0\"", "\"-1\"", "\"+1\"", "\"12345678901234567\"",
				"\"xyz\"")) {
			assertThatIllegalArgumentException().as(bad).isThrownBy(() -> VersionedValue.parseEtag(bad));
		}
	}

	@Test
	void aTimeToLiveTravelsInWholeSecondsWithinTheApisRange() {
		byte[] key = "k".getBytes(StandardCharsets.UTF_8);
		assertThat(Requests.entity(key, Replicas.of(2, 3), Duration.ofMinutes(30)))
			.isEqualTo("/v0/entity?id=k&replicas=2/3&ttl=1800");
		assertThat(Requests.entity(key, null, Duration.ofDays(3650))).isEqualTo("/v0/entity?id=k&ttl=315360000");
		assertThat(Requests.entity(key, null, null)).isEqualTo("/v0/entity?id=k");
		for (Duration bad : List.of(Duration.ZERO, Duration.ofSeconds(-1), Duration.ofMillis(1500),
				Duration.ofDays(3650).plusSeconds(1))) {
			assertThatIllegalArgumentException().as("%s", bad).isThrownBy(() -> Requests.ttlSeconds(bad));
		}
	}

	@Test
	void roundRobinTakesHealthyNodesInTurnThenTheDownOnes() {
		Router router = Router.roundRobin();
		Router.NodeView view = new Router.NodeView(List.of(A, B), List.of(C));
		assertThat(router.plan(null, view)).containsExactly(A, B, C);
		assertThat(router.plan(null, view)).containsExactly(B, A, C);
		assertThat(router.plan(null, view)).containsExactly(A, B, C);
		Router.NodeView allDown = new Router.NodeView(List.of(), List.of(A, B));
		assertThat(List.of(router.plan(null, allDown), router.plan(null, allDown)))
			.containsExactlyInAnyOrder(List.of(A, B), List.of(B, A));
	}

	@Test
	void healthMarksANodeDownForAWhile() throws InterruptedException {
		NodeHealth health = new NodeHealth(List.of(A, B), Duration.ofMillis(200));
		health.markDown(B);
		health.markDown(URI.create("http://elsewhere:1"));
		assertThat(health.view()).isEqualTo(new Router.NodeView(List.of(A), List.of(B)));
		health.markUp(B);
		assertThat(health.view().down()).isEmpty();
		health.markDown(A);
		Thread.sleep(300);
		assertThat(health.view().down()).isEmpty();
	}

	@Test
	void theBudgetAllowsItsBurstThenItsRatio() {
		RetryBudget budget = new RetryBudget(0.5, 2);
		assertThat(budget.tryWithdraw()).isTrue();
		assertThat(budget.tryWithdraw()).isTrue();
		assertThat(budget.tryWithdraw()).isFalse();
		budget.deposit();
		assertThat(budget.tryWithdraw()).isFalse();
		budget.deposit();
		assertThat(budget.tryWithdraw()).isTrue();
		for (int i = 0; i < 100; i++) {
			budget.deposit();
		}
		assertThat(budget.tryWithdraw()).isTrue();
		assertThat(budget.tryWithdraw()).isTrue();
		assertThat(budget.tryWithdraw()).as("capped at the burst").isFalse();
	}

	@Test
	void settingsAreValidatedWhenBuilt() {
		assertThatIllegalArgumentException().isThrownBy(() -> QuorumKvClient.builder().build())
			.withMessageContaining("seed");
		assertThatIllegalArgumentException().isThrownBy(() -> QuorumKvClient.builder().seeds("ftp://x:1").build());
		assertThatIllegalArgumentException()
			.isThrownBy(() -> QuorumKvClient.builder().seeds("http://a:1/path").build());
		assertThatIllegalArgumentException()
			.isThrownBy(() -> QuorumKvClient.builder().seeds("http://a:1", "https://b:1").build());
		assertThatIllegalArgumentException()
			.isThrownBy(() -> QuorumKvClient.builder().seeds("http://a:1").tls(TlsSettings.systemDefault()).build());
		assertThatIllegalArgumentException()
			.isThrownBy(() -> QuorumKvClient.builder().seeds("http://a:1").maxConnectionsPerNode(0).build());
		assertThatIllegalArgumentException()
			.isThrownBy(() -> QuorumKvClient.builder().seeds("http://a:1").responseTimeout(Duration.ZERO).build());
		assertThatIllegalArgumentException().isThrownBy(() -> RetryPolicy.DEFAULT.withMaxAttempts(0));
		assertThatIllegalArgumentException().isThrownBy(() -> RetryPolicy.DEFAULT.withBudget(1.5, 1));
		assertThatIllegalArgumentException().isThrownBy(() -> Credentials.bearer("has space"));
		assertThat(Credentials.bearer("secret-key").toString()).doesNotContain("secret-key");
	}

	@Test
	void retryAfterIsReadInSeconds() {
		assertThat(Failures.retryAfter("1")).isEqualTo(Duration.ofSeconds(1));
		assertThat(Failures.retryAfter(" 30 ")).isEqualTo(Duration.ofSeconds(30));
		assertThat(Failures.retryAfter("Wed, 21 Oct 2015 07:28:00 GMT")).isNull();
		assertThat(Failures.retryAfter(null)).isNull();
	}

	@Test
	void theJsonReaderReadsWhatTheRingUsesAndRefusesTheRest() {
		assertThat(JsonReader.read(" {\"a\": [1, -2.5e3, true, false, null], \"b\": \"x\\u00e9\\n\\\"\\/\"} "))
			.isEqualTo(Map.of("a", List.of(1L, -2500.0, true, false, JsonReader.NULL), "b", "x\u00e9\n\"/"));
		assertThat(JsonReader.read("9223372036854775807")).isEqualTo(Long.MAX_VALUE);
		for (String bad : List.of("", "{", "{\"a\":1,}", "[1 2]", "{\"a\":1,\"a\":2}", "01", "1.", "tru", "\"\u0001\"",
				"\"\\x\"", "{} {}", "[".repeat(40) + "]".repeat(40))) {
			assertThatIllegalArgumentException().as(bad).isThrownBy(() -> JsonReader.read(bad));
		}
	}

}
