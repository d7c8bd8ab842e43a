package io.quorumkv.service.ops;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Generates {@code docs/configuration.md} from the configuration metadata the Spring Boot
 * configuration processor writes at build time
 * ({@code target/classes/META-INF/spring-configuration-metadata.json}): every
 * {@code quorumkv.*} property with its type, default and meaning, so the reference is the
 * Javadoc of the {@code *Properties} records and cannot drift from it.
 * {@link ConfigurationReferenceTest} fails when the checked-in file differs; to update it
 * run {@code main} (or the test with {@code -Dquorumkv.update-docs=true}).
 */
final class ConfigurationReference {

	static final Path METADATA = Path.of("target", "classes", "META-INF", "spring-configuration-metadata.json");

	static final Path DOCUMENT = Path.of("..", "docs", "configuration.md");

	private static final Map<String, String> SECTIONS = new LinkedHashMap<>();

	static {
		SECTIONS.put("quorumkv.storage", "Storage");
		SECTIONS.put("quorumkv.storage.lsm", "LSM backend (docs/storage-lsm.md)");
		SECTIONS.put("quorumkv.storage.h2", "H2 backend (docs/storage-h2.md)");
		SECTIONS.put("quorumkv.storage.derby", "Derby backend (docs/storage-derby.md)");
		SECTIONS.put("quorumkv.cluster", "Cluster");
		SECTIONS.put("quorumkv.cluster.breaker", "Circuit breaker per peer");
		SECTIONS.put("quorumkv.cluster.hints", "Hinted handoff");
		SECTIONS.put("quorumkv.cluster.membership", "Membership changes (docs/membership.md)");
		SECTIONS.put("quorumkv.metadata", "Metadata group (docs/membership.md)");
		SECTIONS.put("quorumkv.cluster.scan", "Range reads");
		SECTIONS.put("quorumkv.cluster.stream", "Replica streams between nodes");
		SECTIONS.put("quorumkv.repair", "Anti-entropy repair (docs/reliability.md)");
		SECTIONS.put("quorumkv.cluster.tls", "TLS between the nodes (docs/security.md)");
		SECTIONS.put("quorumkv.http", "Public API limits");
		SECTIONS.put("quorumkv.paxos", "Conditional writes and serial reads (docs/api.md)");
		SECTIONS.put("quorumkv.security", "Client authentication and the admin credential (docs/security.md)");
		SECTIONS.put("quorumkv.watchdog", "Stall watchdog (docs/operations.md)");
	}

	private static final String HEADER = """
			# Configuration reference

			<!-- Generated from service/target/classes/META-INF/spring-configuration-metadata.json
			     by ConfigurationReference (service tests); do not edit: edit the Javadoc of
			     the *Properties record that binds it and run the generator. ConfigurationReferenceTest fails when
			     this file and the metadata differ. -->

			Every setting is a Spring property: `--name=value` on the command line, an
			`application.yml` next to the jar, or an environment variable
			(`QUORUMKV_STORAGE_PATH` for `quorumkv.storage.path`). Sizes take `KB`, `MB`, `GB`;
			durations `ms`, `s`, `m`, `h`, `d`. A bad value stops the start with a message
			naming the property.

			Spring Boot settings operators use most: `server.port` (8080),
			`management.server.port` (Actuator on a port of its own; unset: the main port),
			`management.endpoints.web.exposure.include` (`health,metrics,prometheus`; add
			`quorumkv` for the admin endpoint and `scripts/qkv`, which need an API key of admin
			access), `server.ssl.bundle` and `server.ssl.client-auth` (TLS of the API, with
			`spring.ssl.bundle.*`: [security.md](security.md)),
			`logging.structured.format.console` (`ecs`, `logstash` or `gelf` for JSON logs),
			`spring.lifecycle.timeout-per-shutdown-phase` (20s: the longest drain on shutdown).
			See [operations.md](operations.md).
			""";

	private ConfigurationReference() {
	}

	public static void main(String[] args) throws IOException {
		Files.writeString(DOCUMENT, render(Files.readString(METADATA)));
	}

	/** The document for a metadata file's content. */
	static String render(String metadataJson) {
		JsonNode metadata = JsonMapper.builder().build().readTree(metadataJson);
		Map<String, List<JsonNode>> bySection = new LinkedHashMap<>();
		SECTIONS.keySet().forEach((section) -> bySection.put(section, new ArrayList<>()));
		List<JsonNode> properties = new ArrayList<>();
		metadata.path("properties").values().forEach(properties::add);
		properties.sort(Comparator.comparing((property) -> property.path("name").asString()));
		for (JsonNode property : properties) {
			String name = property.path("name").asString();
			if (!name.startsWith("quorumkv.")) {
				continue;
			}
			String section = name.substring(0, name.lastIndexOf('.'));
			bySection.computeIfAbsent(section, (key) -> new ArrayList<>()).add(property);
		}
		StringBuilder text = new StringBuilder(HEADER);
		bySection.forEach((section, rows) -> {
			if (rows.isEmpty()) {
				return;
			}
			text.append("\n## ").append(SECTIONS.getOrDefault(section, section)).append("\n\n");
			text.append("| property | type | default | meaning |\n|---|---|---|---|\n");
			for (JsonNode property : rows) {
				text.append("| `")
					.append(property.path("name").asString())
					.append("` | ")
					.append(type(property.path("type").asString("")))
					.append(" | ")
					.append(defaultValue(property.get("defaultValue")))
					.append(" | ")
					.append(cell(property.path("description").asString("")))
					.append(" |\n");
			}
		});
		return text.toString();
	}

	private static String type(String type) {
		String simple = type.replaceAll("[a-z][a-z0-9]*\\.", "").replace('$', '.');
		simple = simple.replaceAll("^\\w+\\.(\\w+)$", "$1");
		return cell(simple.replace("<", "&lt;").replace(">", "&gt;"));
	}

	private static String defaultValue(JsonNode value) {
		if (value == null || value.isNull()) {
			return "—";
		}
		if (value.isArray()) {
			List<String> items = new ArrayList<>();
			value.values().forEach((item) -> items.add(item.asString()));
			return items.isEmpty() ? "—" : "`" + String.join(",", items) + "`";
		}
		return "`" + value.asString() + "`";
	}

	private static String cell(String text) {
		return text.replaceAll("\\{@code ([^}]*)\\}", "`$1`")
			.replaceAll("\\{@link ([^}]*)\\}", "`$1`")
			.replaceAll("\\s+", " ")
			.replace("|", "\\|")
			.strip();
	}

}
