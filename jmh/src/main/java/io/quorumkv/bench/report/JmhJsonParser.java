package io.quorumkv.bench.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Reads JMH's JSON result format ({@code -rf json}): an array of benchmark results. */
public final class JmhJsonParser {

	private static final JsonMapper MAPPER = JsonMapper.builder().build();

	private JmhJsonParser() {
	}

	/**
	 * Parses a JMH JSON result file's text.
	 * @param json the file's content
	 * @return one result per benchmark and parameter set, in file order
	 * @throws IllegalArgumentException when the text is not a JMH result array
	 */
	public static List<JmhResult> parse(String json) {
		JsonNode root = MAPPER.readTree(json);
		if (!root.isArray()) {
			throw new IllegalArgumentException("A JMH JSON result is an array of benchmarks");
		}
		List<JmhResult> results = new ArrayList<>();
		for (JsonNode node : root) {
			JsonNode metric = node.path("primaryMetric");
			if (!node.hasNonNull("benchmark") || !metric.hasNonNull("score")) {
				throw new IllegalArgumentException("A JMH result needs \"benchmark\" and \"primaryMetric.score\"");
			}
			Map<String, String> params = new TreeMap<>();
			node.path("params").properties().forEach((e) -> params.put(e.getKey(), e.getValue().asString()));
			JsonNode error = metric.path("scoreError");
			results.add(new JmhResult(node.path("benchmark").asString(), node.path("mode").asString(),
					node.path("threads").asInt(1), node.path("forks").asInt(1), params, metric.path("score").asDouble(),
					error.isNumber() ? error.asDouble() : Double.NaN, metric.path("scoreUnit").asString()));
		}
		return results;
	}

}
