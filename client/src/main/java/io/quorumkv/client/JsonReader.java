package io.quorumkv.client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small strict JSON reader (RFC 8259) for the one JSON document the client reads, the
 * ring ({@code GET /v0/ring}): objects become {@code Map<String, Object>}, arrays
 * {@code List<Object>}, strings {@code String}, integers {@code Long} (others
 * {@code Double}), {@code true}/{@code false} {@code Boolean} and {@code null}
 * {@link #NULL}. Nesting is bounded, so a hostile document cannot exhaust the stack. The
 * client takes no JSON library for this: one more dependency for every application for
 * one small document.
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

	private final String text;

	private int at;

	private JsonReader(String text) {
		this.text = text;
	}

	/**
	 * The value of {@code text}.
	 * @throws IllegalArgumentException when it is not one JSON value
	 */
	static Object read(String text) {
		JsonReader reader = new JsonReader(text);
		Object value = reader.value(0);
		reader.skipSpace();
		if (reader.at != text.length()) {
			throw reader.error("text after the value");
		}
		return value;
	}

	private Object value(int depth) {
		if (depth > MAX_DEPTH) {
			throw error("nested deeper than " + MAX_DEPTH);
		}
		skipSpace();
		if (this.at >= this.text.length()) {
			throw error("a value expected");
		}
		char c = this.text.charAt(this.at);
		return switch (c) {
			case '{' -> object(depth);
			case '[' -> array(depth);
			case '"' -> string();
			case 't' -> literal("true", Boolean.TRUE);
			case 'f' -> literal("false", Boolean.FALSE);
			case 'n' -> literal("null", NULL);
			default -> number();
		};
	}

	private Map<String, Object> object(int depth) {
		Map<String, Object> object = new LinkedHashMap<>();
		this.at++;
		skipSpace();
		if (peek() == '}') {
			this.at++;
			return object;
		}
		while (true) {
			skipSpace();
			if (peek() != '"') {
				throw error("a member name expected");
			}
			String name = string();
			skipSpace();
			expect(':');
			if (object.put(name, value(depth + 1)) != null) {
				throw error("member '" + name + "' twice");
			}
			skipSpace();
			if (peek() == ',') {
				this.at++;
				continue;
			}
			expect('}');
			return object;
		}
	}

	private List<Object> array(int depth) {
		List<Object> array = new ArrayList<>();
		this.at++;
		skipSpace();
		if (peek() == ']') {
			this.at++;
			return array;
		}
		while (true) {
			array.add(value(depth + 1));
			skipSpace();
			if (peek() == ',') {
				this.at++;
				continue;
			}
			expect(']');
			return array;
		}
	}

	private String string() {
		this.at++;
		StringBuilder out = new StringBuilder();
		while (true) {
			if (this.at >= this.text.length()) {
				throw error("unterminated string");
			}
			char c = this.text.charAt(this.at++);
			if (c == '"') {
				return out.toString();
			}
			if (c < 0x20) {
				throw error("a control character in a string");
			}
			if (c != '\\') {
				out.append(c);
				continue;
			}
			if (this.at >= this.text.length()) {
				throw error("unterminated escape");
			}
			char escaped = this.text.charAt(this.at++);
			switch (escaped) {
				case '"', '\\', '/' -> out.append(escaped);
				case 'b' -> out.append('\b');
				case 'f' -> out.append('\f');
				case 'n' -> out.append('\n');
				case 'r' -> out.append('\r');
				case 't' -> out.append('\t');
				case 'u' -> {
					if (this.at + 4 > this.text.length()) {
						throw error("short \\u escape");
					}
					try {
						out.append((char) Integer.parseInt(this.text, this.at, this.at + 4, 16));
					}
					catch (NumberFormatException ex) {
						throw error("bad \\u escape");
					}
					this.at += 4;
				}
				default -> throw error("bad escape \\" + escaped);
			}
		}
	}

	private Object number() {
		int start = this.at;
		while (this.at < this.text.length() && "+-0123456789.eE".indexOf(this.text.charAt(this.at)) >= 0) {
			this.at++;
		}
		String number = this.text.substring(start, this.at);
		if (!number.matches("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?")) {
			throw error("not a value: '" + (number.isEmpty() ? String.valueOf(peek()) : number) + "'");
		}
		try {
			return Long.parseLong(number);
		}
		catch (NumberFormatException ex) {
			return Double.parseDouble(number);
		}
	}

	private Object literal(String word, Object value) {
		if (!this.text.startsWith(word, this.at)) {
			throw error("not a value");
		}
		this.at += word.length();
		return value;
	}

	private void expect(char c) {
		if (peek() != c) {
			throw error("'" + c + "' expected");
		}
		this.at++;
	}

	private char peek() {
		return (this.at < this.text.length()) ? this.text.charAt(this.at) : '\0';
	}

	private void skipSpace() {
		while (this.at < this.text.length() && " \t\r\n".indexOf(this.text.charAt(this.at)) >= 0) {
			this.at++;
		}
	}

	private IllegalArgumentException error(String what) {
		return new IllegalArgumentException("not JSON at character " + this.at + ": " + what);
	}

}
