package io.quorumkv.service.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

class QueryParametersTest {

	@Test
	void plainAndPercentEncodedParametersDecodeToTheSameBytes() {
		QueryParameters plain = QueryParameters.parse("id=key-1&replicas=2/3&other=x");
		QueryParameters encoded = QueryParameters.parse("i%64=key%2D1&replica%73=2%2F3&%6Fther=x");
		for (QueryParameters query : new QueryParameters[] { plain, encoded }) {
			assertThat(query.key("id", 64)).isEqualTo(bytes("key-1"));
			assertThat(query.text("replicas")).isEqualTo("2/3");
			assertThat(query.text("other")).isEqualTo("x");
			assertThat(query.text("ack")).isNull();
		}
	}

	@Test
	void aParameterGivenTwiceIsRefusedWhateverItsSpelling() {
		assertThatThrownBy(() -> QueryParameters.parse("id=a&id=b")).isInstanceOf(ApiException.class)
			.hasMessageContaining("'id' is given more than once");
		assertThatThrownBy(() -> QueryParameters.parse("id=a&i%64=b")).isInstanceOf(ApiException.class)
			.hasMessageContaining("'id' is given more than once");
		assertThatThrownBy(() -> QueryParameters.parse("x=a&x=b")).isInstanceOf(ApiException.class)
			.hasMessageContaining("'x' is given more than once");
	}

	@Test
	void nonAsciiBytesMustBeEscapedUtf8() {
		// The server hands the request line over one char per byte (ISO-8859-1); a raw
		// byte outside printable ASCII is refused, percent-encoded it is taken.
		String rawUtf8 = new String("ключ".getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
		assertThatThrownBy(() -> QueryParameters.parse("id=" + rawUtf8)).isInstanceOf(ApiException.class)
			.hasMessage("raw byte 0xd0 in id at character 0: percent-encode it (%D0)");
		assertThatThrownBy(() -> QueryParameters.parse("id=a\u007f")).isInstanceOf(ApiException.class)
			.hasMessageContaining("raw byte 0x7f");
		assertThat(QueryParameters.parse("id=%D0%BA").key("id", 64)).isEqualTo(bytes("к"));
		assertThat(QueryParameters.parse("replicas=%C2%BD").text("replicas")).isEqualTo("½");
		for (String bad : new String[] { "id=%FF", "id=%C0%AF", "id=a%ED%A0%80" }) {
			assertThatThrownBy(() -> QueryParameters.parse(bad).key("id", 64)).as(bad)
				.isInstanceOf(ApiException.class)
				.hasMessageContaining("not valid UTF-8");
		}
		assertThatThrownBy(() -> QueryParameters.parse("replicas=%FF").text("replicas"))
			.isInstanceOf(ApiException.class)
			.hasMessageContaining("'replicas' is not valid UTF-8");
	}

	@Test
	void keysAreCheckedForPresenceAndSize() {
		assertThatThrownBy(() -> QueryParameters.parse("id=").key("id", 64)).isInstanceOf(ApiException.class)
			.hasMessageContaining("required");
		assertThatThrownBy(() -> QueryParameters.parse(null).key("id", 64)).isInstanceOf(ApiException.class)
			.hasMessageContaining("required");
		assertThatThrownBy(() -> QueryParameters.parse("id=abcde").key("id", 4)).isInstanceOf(ApiException.class)
			.hasMessageContaining("5 bytes; the limit is 4");
		assertThat(QueryParameters.parse("start=a").optionalKey("end", 4)).isNull();
		assertThat(QueryParameters.parse("start=a&end=b").optionalKey("end", 4)).isEqualTo(bytes("b"));
	}

	@Test
	void malformedEscapesAreRefusedWithTheirPosition() {
		assertThatThrownBy(() -> QueryParameters.parse("id=ab%4")).isInstanceOf(ApiException.class)
			.hasMessageContaining("malformed percent-encoding in id at character 2");
		assertThatThrownBy(() -> QueryParameters.parse("i%6=a")).isInstanceOf(ApiException.class)
			.hasMessageContaining("malformed percent-encoding in parameter name");
	}

	@Test
	void aNameThatOnlyStartsLikeAKnownOneIsItsOwnParameter() {
		QueryParameters query = QueryParameters.parse("idx=1&i=2&ends=3");
		assertThat(query.text("id")).isNull();
		assertThat(query.text("idx")).isEqualTo("1");
		assertThat(query.text("i")).isEqualTo("2");
		assertThat(query.text("end")).isNull();
		assertThat(query.text("ends")).isEqualTo("3");
	}

	@Test
	void aPublicRouteRefusesEveryParameterItDoesNotRead() {
		assertThat(QueryParameters.parse("id=k&ttl=5&replicas=1/1", QueryParameters.KEY_WRITE, "PUT /v0/entity")
			.text("ttl")).isEqualTo("5");
		assertThatThrownBy(() -> QueryParameters.parse("id=k&tll=5", QueryParameters.KEY_WRITE, "PUT /v0/entity"))
			.isInstanceOf(ApiException.class)
			.hasMessage("unknown parameter 'tll' for PUT /v0/entity");
		assertThatThrownBy(() -> QueryParameters.parse("id=k&ttl=5", QueryParameters.KEY, "GET /v0/entity"))
			.isInstanceOf(ApiException.class)
			.hasMessage("parameter 'ttl' does not apply to GET /v0/entity");
		assertThatThrownBy(() -> QueryParameters.parse("start=a&id=k", QueryParameters.RANGE, "GET /v0/entities"))
			.isInstanceOf(ApiException.class)
			.hasMessage("parameter 'id' does not apply to GET /v0/entities");
		assertThatThrownBy(() -> QueryParameters.parse("a%01b=1", QueryParameters.NONE, "GET /v0/status"))
			.isInstanceOf(ApiException.class)
			.hasMessage("unknown parameter 'a?b' for GET /v0/status");
		assertThat(QueryParameters.parse("&&", QueryParameters.NONE, "GET /v0/status").has("id")).isFalse();
		QueryParameters range = QueryParameters.parse("start=&end=", QueryParameters.RANGE, "GET /v0/entities");
		assertThat(range.has("start")).isTrue();
		assertThat(range.has("after")).isFalse();
		assertThat(range.optionalKey("start", 4)).isNull();
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
