package io.quorumkv.service.http;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.web.reactive.function.server.ServerRequest;

/**
 * The conditions a write may carry (RFC 9110 §13): {@code If-Match} with {@code *} or a
 * list of entity tags, compared strongly (a weak tag never matches), and
 * {@code If-None-Match} with {@code *} (create only) or a list, compared weakly. Both
 * given: both must hold. The write is then decided by Paxos on the key
 * ({@link io.quorumkv.service.paxos.Paxos}), the condition evaluated against the key's
 * current version there.
 *
 * @param ifMatch the tags of {@code If-Match} ({@code *} as itself), null when absent
 * @param ifNoneMatch the tags of {@code If-None-Match}, null when absent
 */
record WriteConditions(@Nullable List<String> ifMatch,
		@Nullable List<String> ifNoneMatch) implements Predicate<@Nullable Entry> {

	private static final String ANY = "*";

	/**
	 * The request's conditions, or null when it carries none (one header lookup per
	 * header when absent).
	 * @throws ApiException 400 when a condition is malformed
	 */
	static @Nullable WriteConditions of(ServerRequest request) {
		ServerRequest.Headers headers = request.headers();
		List<String> ifMatch = tags(headers, HttpHeaders.IF_MATCH);
		List<String> ifNoneMatch = tags(headers, HttpHeaders.IF_NONE_MATCH);
		return (ifMatch == null && ifNoneMatch == null) ? null : new WriteConditions(ifMatch, ifNoneMatch);
	}

	private static @Nullable List<String> tags(ServerRequest.Headers headers, String name) {
		if (headers.firstHeader(name) == null) {
			return null;
		}
		List<String> tags = new ArrayList<>();
		for (String value : headers.header(name)) {
			if (!wellFormedCondition(value)) {
				throw ApiException.badRequest("malformed " + name + " header: give * or a list of quoted entity tags"
						+ " such as \"5f3a2c1b9d0e4\"");
			}
			for (String element : value.split(",")) {
				String tag = element.strip();
				if (!tag.isEmpty()) {
					tags.add(tag);
				}
			}
		}
		return tags;
	}

	/**
	 * Whether the conditions hold for {@code current} (null: absent, deleted, expired).
	 */
	@Override
	public boolean test(@Nullable Entry current) {
		String etag = (current != null) ? Versions.etag(current) : null;
		if (this.ifMatch != null) {
			// Strong comparison: a weak tag matches nothing.
			boolean match = etag != null && (this.ifMatch.contains(ANY) || this.ifMatch.contains(etag));
			if (!match) {
				return false;
			}
		}
		if (this.ifNoneMatch != null && etag != null) {
			for (String tag : this.ifNoneMatch) {
				String weak = tag.startsWith("W/") ? tag.substring(2) : tag;
				if (weak.equals(ANY) || weak.equals(etag)) {
					return false;
				}
			}
		}
		return true;
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
