package io.quorumkv.client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.core.json.JsonFactory;

/**
 * The one JSON document the client reads, the ring ({@code GET /v0/ring}), as plain
 * values: objects become {@code Map<String, Object>}, arrays {@code List<Object>},
 * strings {@code String}, integers {@code Long} (others {@code Double}),
 * {@code true}/{@code false} {@code Boolean} and {@code null} {@link #NULL}. Jackson's
 * streaming parser does the reading (jackson-core only, no data binding), strict: a
 * repeated name, trailing text and nesting deeper than {@value #MAX_DEPTH} are refused,
 * so a hostile document cannot exhaust the stack.
 */
final class JsonReader {

	/** JSON's {@code null}. */
	static final Object NULL = new Object() {
		@Override
		public String toString() {
			return "null";
		}
	};

	private static final int MAX_DEPTH = 32;

	private static final JsonFactory JSON = JsonFactory.builder()
		.enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
		.streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(MAX_DEPTH).build())
		.build();

	private JsonReader() {
	}

	/**
	 * The value of {@code text}.
	 * @throws IllegalArgumentException when it is not one JSON value
	 */
	static Object read(String text) {
		try (JsonParser parser = JSON.createParser(ObjectReadContext.empty(), text)) {
			JsonToken first = parser.nextToken();
			if (first == null) {
				throw new IllegalArgumentException("not JSON: a value expected");
			}
			Object value = value(parser, first);
			if (parser.nextToken() != null) {
				throw new IllegalArgumentException("not JSON: text after the value");
			}
			return value;
		}
		catch (JacksonException ex) {
			throw new IllegalArgumentException("not JSON: " + ex.getOriginalMessage(), ex);
		}
	}

	private static Object value(JsonParser parser, JsonToken token) {
		return switch (token) {
			case START_OBJECT -> {
				Map<String, Object> object = new LinkedHashMap<>();
				for (JsonToken next = parser.nextToken(); next != JsonToken.END_OBJECT; next = parser.nextToken()) {
					String name = parser.currentName();
					object.put(name, value(parser, parser.nextToken()));
				}
				yield object;
			}
			case START_ARRAY -> {
				List<Object> array = new ArrayList<>();
				for (JsonToken next = parser.nextToken(); next != JsonToken.END_ARRAY; next = parser.nextToken()) {
					array.add(value(parser, next));
				}
				yield array;
			}
			case VALUE_STRING -> parser.getString();
			case VALUE_NUMBER_INT -> parser.getLongValue();
			case VALUE_NUMBER_FLOAT -> parser.getDoubleValue();
			case VALUE_TRUE -> Boolean.TRUE;
			case VALUE_FALSE -> Boolean.FALSE;
			case VALUE_NULL -> NULL;
			default -> throw new IllegalArgumentException("not JSON: unexpected " + token);
		};
	}

}
