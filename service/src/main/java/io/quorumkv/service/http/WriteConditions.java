package io.quorumkv.service.http;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.web.reactive.function.server.ServerRequest;

/**
 * The conditions a write may carry ({@code If-Match}, {@code If-None-Match}, RFC 9110
 * §13), which the node refuses until it runs consensus per key (docs/api.md, Versions).
 */
final class WriteConditions {

	private static final String[] CONDITIONS = { HttpHeaders.IF_MATCH, HttpHeaders.IF_NONE_MATCH };

	private WriteConditions() {
	}

	/**
	 * A write with {@code If-Match} or {@code If-None-Match} (RFC 9110 §13) is refused,
	 * never applied unconditionally: checking the version a coordinator reads and then
	 * writing is a race between coordinators, and holding a condition takes consensus on
	 * the key, which the node does not run yet. A well-formed condition is a 501 saying
	 * the write was not applied; a malformed one a 400. Costs one header lookup per
	 * header when absent.
	 * @throws ApiException (400 or 501) when the request carries a condition
	 */
	static void refuse(ServerRequest request) {
		ServerRequest.Headers headers = request.headers();
		for (String name : CONDITIONS) {
			if (headers.firstHeader(name) == null) {
				continue;
			}
			for (String value : headers.header(name)) {
				if (!wellFormedCondition(value)) {
					throw ApiException.badRequest("malformed " + name
							+ " header: give * or a list of quoted entity tags" + " such as \"5f3a2c1b9d0e4\"");
				}
			}
			throw new ApiException(HttpStatus.NOT_IMPLEMENTED, "conditional writes (" + name
					+ ") are not supported yet: the write was not applied; see docs/api.md, Versions");
		}
	}

	/**
	 * RFC 9110 §13.1.1: {@code *}, or a comma-separated list of entity tags
	 * ({@code [W/]"etagc*"}, etagc any visible byte but {@code "}, or obs-text).
	 */
	static boolean wellFormedCondition(String value) {
		String field = value.strip();
		if (field.equals("*")) {
			return true;
		}
		boolean any = false;
		for (String element : field.split(",", -1)) {
			String tag = element.strip();
			if (tag.isEmpty()) {
				continue;
			}
			if (tag.startsWith("W/")) {
				tag = tag.substring(2);
			}
			if (tag.length() < 2 || tag.charAt(0) != '"' || tag.charAt(tag.length() - 1) != '"') {
				return false;
			}
			for (int i = 1; i < tag.length() - 1; i++) {
				char c = tag.charAt(i);
				if (c == '"' || c < 0x21 || c == 0x7F || c > 0xFF) {
					return false;
				}
			}
			any = true;
		}
		return any;
	}

}
