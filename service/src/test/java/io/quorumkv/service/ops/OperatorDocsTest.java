package io.quorumkv.service.ops;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.quorumkv.service.QuorumKvApplication;
import io.quorumkv.service.support.DownPeerTopology;
import io.quorumkv.service.support.TestClients;
import io.quorumkv.service.support.TestKeys;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.micrometer.metrics.test.autoconfigure.AutoConfigureMetrics;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpHeaders;
import org.springframework.context.ApplicationContext;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.server.RouterFunction;

/**
 * The operator documents against a real node: {@code docs/openapi.yaml} describes every
 * route of the node's router functions and every status of docs/api.md, and the node
 * serves it; every metric the Grafana dashboard queries is in a real Prometheus scrape
 * (dumped to {@code target/prometheus-scrape.txt}).
 */
@SpringBootTest(classes = QuorumKvApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=health,prometheus,quorumkv",
				"quorumkv.cluster.secret=docs-test-secret", "quorumkv.cluster.replica-timeout=500ms",
				"quorumkv.cluster.connect-timeout=200ms", "quorumkv.storage.lsm.memtable-size=16KB",
				"quorumkv.storage.lsm.level0-compaction-trigger=2" })
@AutoConfigureMetrics
// The context closes with the class, before JUnit deletes its static data folder; cached,
// it would close at JVM exit into a deleted folder (H2 then re-creates it for its trace
// file).
@DirtiesContext
class OperatorDocsTest {

	static final Path DOCS = Path.of("..", "docs").toAbsolutePath().normalize();

	static final List<String> DOCUMENTED_STATUSES = List.of("200", "201", "202", "400", "404", "405", "413", "503",
			"504");

	@TempDir
	static Path data;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		DownPeerTopology.register(registry, data);
		TestKeys.properties().forEach((name, value) -> registry.add(name, () -> value));
	}

	@LocalServerPort
	int port;

	@Autowired
	ApplicationContext context;

	WebTestClient client;

	@BeforeEach
	void client() {
		// The admin operations and views need an admin credential.
		this.client = TestClients.forPort(this.port)
			.mutate()
			.defaultHeader(HttpHeaders.AUTHORIZATION, TestKeys.bearer(TestKeys.ADMIN))
			.build();
	}

	@Test
	@SuppressWarnings("unchecked")
	void openApiDocumentCoversEveryRouteAndStatus() throws IOException {
		Map<String, Object> document = new Yaml().load(Files.readString(DOCS.resolve("openapi.yaml")));
		assertThat((String) document.get("openapi")).startsWith("3.");
		Map<String, Map<String, Object>> paths = (Map<String, Map<String, Object>>) document.get("paths");
		Set<String> documented = new TreeSet<>();
		Set<String> statuses = new HashSet<>();
		paths.forEach((path, operations) -> operations.forEach((method, operation) -> {
			if (!method.equals("parameters")) {
				documented.add(method.toUpperCase(Locale.ROOT) + " " + path);
				statuses.addAll(((Map<String, Object>) ((Map<String, Object>) operation).get("responses")).keySet());
			}
		}));
		Set<String> routed = new TreeSet<>();
		Set<String> fallbackPaths = new TreeSet<>();
		for (RouterFunction<?> router : this.context.getBeansOfType(RouterFunction.class).values()) {
			RouteInventory.of(router).forEach((route) -> {
				if (route.methods().isEmpty()) {
					fallbackPaths.add(route.path());
				}
				route.methods().forEach((method) -> routed.add(method.name() + " " + route.path()));
			});
		}
		assertThat(routed).contains("GET /v0/entity", "PUT /v0/entity", "DELETE /v0/entity", "GET /v0/openapi.yaml");
		assertThat(documented).as("docs/openapi.yaml against the router functions").isEqualTo(routed);
		assertThat(fallbackPaths).allSatisfy((path) -> assertThat(paths).containsKey(path));
		assertThat(statuses).containsAll(DOCUMENTED_STATUSES);
		String api = Files.readString(DOCS.resolve("api.md"));
		DOCUMENTED_STATUSES.forEach((status) -> assertThat(api).contains(status));
	}

	@Test
	void nodeServesTheDocument() throws IOException {
		byte[] served = this.client.get()
			.uri("/v0/openapi.yaml")
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.contentType("application/yaml")
			.expectBody()
			.returnResult()
			.getResponseBody();
		assertThat(served).isEqualTo(Files.readAllBytes(DOCS.resolve("openapi.yaml")));
	}

	@Test
	void everyDashboardMetricIsInARealScrape() throws IOException {
		exerciseEveryMeter();
		String scrape = scrape();
		Files.writeString(Path.of("target", "prometheus-scrape.txt"), scrape);
		Set<String> scraped = new HashSet<>();
		scrape.lines()
			.filter((line) -> !line.startsWith("#") && !line.isBlank())
			.forEach((line) -> scraped.add(line.split("[{ ]", 2)[0]));
		JsonNode dashboard = JsonMapper.builder()
			.build()
			.readTree(Files.readString(DOCS.resolve("grafana/quorumkv-dashboard.json")));
		Set<String> queried = Dashboards.metricNames(dashboard);
		assertThat(queried).hasSizeGreaterThan(10);
		assertThat(queried).as("metrics the dashboard queries, missing from %s", scraped).isSubsetOf(scraped);
		assertThat(dashboard.path("__inputs").get(0).path("name").asString()).isEqualTo("DS_PROMETHEUS");
	}

	private void exerciseEveryMeter() {
		for (int i = 0; i < 40; i++) {
			this.client.put()
				.uri("/v0/entity?id=d" + i + "&replicas=1/2")
				.bodyValue(new byte[2048])
				.exchange()
				.expectStatus()
				.isCreated();
		}
		this.client.get().uri("/v0/entity?id=d1&replicas=1/2").exchange().expectStatus().isOk();
		this.client.get().uri("/v0/entity?id=absent&replicas=1/2").exchange().expectStatus().isNotFound();
		this.client.get().uri("/v0/entity?id=d1&replicas=2/2").exchange().expectStatus().isEqualTo(504);
		this.client.delete().uri("/v0/entity?id=d2&replicas=1/2").exchange().expectStatus().isAccepted();
		// A range reads the peer's through the connection pool too, and the peer is
		// down.
		this.client.get().uri("/v0/entities?start=d1&end=d3").exchange().expectStatus().is5xxServerError();
		this.client.post()
			.uri("/actuator/quorumkv/compact")
			.contentType(org.springframework.http.MediaType.APPLICATION_JSON)
			.bodyValue("{}")
			.exchange()
			.expectStatus()
			.isOk();
		eventually(Duration.ofSeconds(20), () -> assertThat(scrape())
			.containsPattern("(?m)^quorumkv_storage_compaction_count_total\\{[^}]*\\} [1-9]"));
	}

	private String scrape() {
		byte[] body = this.client.get()
			.uri("/actuator/prometheus")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.returnResult()
			.getResponseBody();
		return new String((body != null) ? body : new byte[0], StandardCharsets.UTF_8);
	}

	/** Metric names in a dashboard's PromQL expressions. */
	static final class Dashboards {

		private static final Pattern LABELS = Pattern.compile("\\{[^}]*\\}|\\[[^\\]]*\\]|\"[^\"]*\"");

		private static final Pattern NAME = Pattern
			.compile("\\b((?:quorumkv|resilience4j|reactor_netty|jvm|process)_[a-z0-9_]+)\\b");

		static Set<String> metricNames(JsonNode dashboard) {
			Set<String> names = new TreeSet<>();
			collect(dashboard, names);
			return names;
		}

		private static void collect(JsonNode node, Set<String> names) {
			if (node.isObject()) {
				JsonNode expr = node.get("expr");
				if (expr != null && expr.isString()) {
					Matcher matcher = NAME.matcher(LABELS.matcher(expr.asString()).replaceAll(""));
					while (matcher.find()) {
						names.add(matcher.group(1));
					}
				}
				node.values().forEach((child) -> collect(child, names));
			}
			else if (node.isArray()) {
				node.values().forEach((child) -> collect(child, names));
			}
		}

	}

}
