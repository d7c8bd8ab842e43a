package io.quorumkv.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The direct route must refuse exactly the request targets WebFlux refuses: WebFlux
 * parses every target with {@link URI} and answers 400 when that fails.
 */
class DirectRoutesTest {

	@Test
	void queryCheckAgreesWithJavaNetUriOnEveryCharacter() {
		List<String> queries = new ArrayList<>();
		for (char c = 0; c < 0x200; c++) {
			if (c == '#') {
				continue; // a target with a fragment is left to WebFlux
							// (DirectRoutes.matches)
			}
			queries.add("id=a" + c + "b");
			queries.add("id=" + c);
		}
		queries.addAll(List.of("id=%", "id=%4", "id=%zz", "id=%4g", "id=%41", "id=a%2", "id=%C3%A9", "", "id=a&b=c",
				"id=\u00e9\u00a0", "id=\u2028", "id=\u3000", "id=%%41"));
		for (String query : queries) {
			assertThat(DirectRoutes.isUriQuery(query)).as("query %s", escaped(query)).isEqualTo(uriAccepts(query));
		}
	}

	@Test
	void rawQueryIsWhatFollowsTheQuestionMark() {
		assertThat(DirectRoutes.rawQuery("/v0/entity")).isNull();
		assertThat(DirectRoutes.rawQuery("/v0/entity?")).isEmpty();
		assertThat(DirectRoutes.rawQuery("/v0/entity?id=a?b")).isEqualTo("id=a?b");
	}

	private static boolean uriAccepts(String query) {
		try {
			new URI("http://localhost:8080/v0/entity?" + query);
			return true;
		}
		catch (URISyntaxException ex) {
			return false;
		}
	}

	private static String escaped(String text) {
		StringBuilder out = new StringBuilder();
		text.chars().forEach((c) -> out.append((c < 0x20 || c > 0x7e) ? String.format("\\u%04x", c) : (char) c));
		return out.toString();
	}

}
