package io.quorumkv.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

import io.quorumkv.service.QuorumKvApplication;
import io.quorumkv.service.support.RawHttp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * What a client meets at the edges of the public API, as one table over every public
 * route: each request is sent byte for byte as written (no client re-encodes it), and
 * each answer's status and body are checked.
 */
@SpringBootTest(classes = QuorumKvApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT)
@DirtiesContext
class PublicApiEdgesTest {

	@TempDir
	static Path data;

	@DynamicPropertySource
	static void storage(DynamicPropertyRegistry registry) {
		registry.add("quorumkv.storage.path", () -> data.resolve("node").toString());
	}

	@LocalServerPort
	int port;

	/**
	 * One request and what it must be answered: the status, and a text the body must hold
	 * (empty: any body, even none, as for a HEAD).
	 */
	record Case(String method, String target, String headers, int status, String body) {

		Case(String method, String target, int status, String body) {
			this(method, target, "", status, body);
		}

		@Override
		public String toString() {
			return this.method + " " + this.target + (this.headers.isEmpty() ? "" : " [" + this.headers.strip() + "]");
		}

	}

	/** No parameter is silently ignored: unknown, twice, or meaningless for the route. */
	static final List<Case> PARAMETERS = List.of(
			// unknown
			new Case("GET", "/v0/status?verbose=1", 400, "unknown parameter 'verbose' for GET /v0/status"),
			new Case("GET", "/v0/ring?epoch=3", 400, "unknown parameter 'epoch' for GET /v0/ring"),
			new Case("GET", "/v0/openapi.yaml?v=1", 400, "unknown parameter 'v' for GET /v0/openapi.yaml"),
			new Case("PUT", "/v0/entity?id=k&tll=2", 400, "unknown parameter 'tll' for PUT /v0/entity"),
			new Case("GET", "/v0/entity?id=k&replica=9/9", 400, "unknown parameter 'replica' for GET /v0/entity"),
			new Case("HEAD", "/v0/entity?id=k&x", 400, ""),
			new Case("DELETE", "/v0/entity?id=k&%74ll=2", 400, "unknown parameter 'tll' for DELETE /v0/entity"),
			new Case("GET", "/v0/entities?start=a&limt=2", 400, "unknown parameter 'limt' for GET /v0/entities"),
			// twice, whatever the spelling
			new Case("GET", "/v0/entity?id=a&i%64=b", 400, "parameter 'id' is given more than once"),
			new Case("PUT", "/v0/entity?id=a&ttl=5&ttl=5", 400, "parameter 'ttl' is given more than once"),
			new Case("GET", "/v0/entities?start=a&end=b&end=c", 400, "parameter 'end' is given more than once"),
			// known, but meaningless for the route
			new Case("GET", "/v0/status?id=k", 400, "parameter 'id' does not apply to GET /v0/status"),
			new Case("GET", "/v0/entity?id=k&ttl=5", 400, "parameter 'ttl' does not apply to GET /v0/entity"),
			new Case("DELETE", "/v0/entity?id=k&ttl=5", 400, "parameter 'ttl' does not apply to DELETE /v0/entity"),
			new Case("PUT", "/v0/entity?id=k&limit=5", 400, "parameter 'limit' does not apply to PUT /v0/entity"),
			new Case("GET", "/v0/entity?id=k&start=a", 400, "parameter 'start' does not apply to GET /v0/entity"),
			new Case("GET", "/v0/entities?id=k", 400, "parameter 'id' does not apply to GET /v0/entities"),
			new Case("GET", "/v0/entities?start=a&ttl=1", 400, "parameter 'ttl' does not apply to GET /v0/entities"),
			// what is allowed still is
			new Case("GET", "/v0/status", 200, "OK"), new Case("GET", "/v0/status?", 200, "OK"),
			new Case("PUT", "/v0/entity?id=edge&ttl=600&replicas=1/1", 201, ""),
			new Case("GET", "/v0/entity?id=edge&ack=1&from=1", 200, ""),
			new Case("GET", "/v0/entities?start=edge&end=edgf&limit=1&replicas=1/1",
					"Accept: application/octet-stream\r\n", 200, "edge"));

	/** HEAD on an entity: a GET's status and headers, no body. */
	static final List<Case> HEAD = List.of(new Case("PUT", "/v0/entity?id=head", 201, ""),
			new Case("HEAD", "/v0/entity?id=head", 200, ""), new Case("HEAD", "/v0/entity?id=absent", 404, ""),
			new Case("HEAD", "/v0/entity?id=", 400, ""), new Case("POST", "/v0/entity?id=head", 405, "GET, HEAD"));

	/** An empty bound is an open end, for start, after and end alike. */
	static final List<Case> BOUNDS = List.of(new Case("PUT", "/v0/entity?id=b1", 201, ""),
			new Case("GET", "/v0/entities?start=", "Accept: application/octet-stream\r\n", 200, "b1"),
			new Case("GET", "/v0/entities?after=", "Accept: application/octet-stream\r\n", 200, "b1"),
			new Case("GET", "/v0/entities?start=b&end=", "Accept: application/octet-stream\r\n", 200, "b1"),
			new Case("GET", "/v0/entities?start=b1&after=b0", 400, "exactly one of 'start'"),
			new Case("GET", "/v0/entities", 400, "exactly one of 'start'"));

	/** The range's format by the Accept header's q-values. */
	static final List<Case> ACCEPT = List.of(new Case("PUT", "/v0/entity?id=fmt", 201, ""),
			new Case("GET", "/v0/entities?start=fmt&limit=1", "Accept: application/x-ndjson;q=0.5, */*\r\n", 200,
					"Content-Type: application/octet-stream"),
			new Case("GET", "/v0/entities?start=fmt&limit=1",
					"Accept: application/octet-stream;q=0.1, application/x-ndjson;q=0.9\r\n", 200,
					"Content-Type: application/x-ndjson"),
			new Case("GET", "/v0/entities?start=fmt&limit=1", "Accept: */*, application/octet-stream;q=0\r\n", 200,
					"Content-Type: application/x-ndjson"),
			new Case("GET", "/v0/entities?start=fmt&limit=1", "Accept: application/x-ndjson\r\n", 200,
					"Content-Type: application/x-ndjson"),
			new Case("GET", "/v0/entities?start=fmt&limit=1", "Accept: text/html\r\n", 200,
					"Content-Type: application/x-ndjson"),
			new Case("GET", "/v0/entities?start=fmt&limit=1", 200, "Content-Type: application/x-ndjson"),
			new Case("GET", "/v0/entities?start=fmt&limit=1", "Accept: */*\r\n", 200,
					"Content-Type: application/x-ndjson"),
			new Case("GET", "/v0/entities?start=fmt&limit=1", "Accept: application/octet-stream\r\n", 200,
					"Content-Type: application/octet-stream"),
			new Case("GET", "/v0/entities?start=fmt&limit=1", "Accept: */*;q=0\r\n", 406, "refuses both"),
			new Case("GET", "/v0/entities?start=fmt&limit=1", "Accept: application/\r\n", 400, "media type"));

	@Test
	void noParameterIsSilentlyIgnored() throws IOException {
		check(PARAMETERS);
	}

	@Test
	void headAnswersAGetsHeadersWithoutTheBody() throws IOException {
		check(HEAD);
		RawHttp.Answer get = send(new Case("GET", "/v0/entity?id=head", 200, ""));
		RawHttp.Answer head = send(new Case("HEAD", "/v0/entity?id=head", 200, ""));
		assertThat(head.body()).isEmpty();
		assertThat(header(head, "ETag")).isNotNull().isEqualTo(header(get, "ETag"));
		assertThat(header(head, "Content-Length")).isEqualTo(header(get, "Content-Length"));
	}

	@Test
	void anEmptyBoundIsAnOpenEnd() throws IOException {
		check(BOUNDS);
	}

	@Test
	void theRangeFormatFollowsTheAcceptHeadersQualities() throws IOException {
		check(ACCEPT);
	}

	/**
	 * A conditional write is applied only when its condition holds, else answered 412
	 * with the current version (none when the key has none); a malformed one is a 400.
	 */
	static final List<Case> CONDITIONS = List.of(new Case("PUT", "/v0/entity?id=kept", 201, ""),
			new Case("PUT", "/v0/entity?id=kept", "If-Match: \"1234\"\r\n", 412, "precondition failed"),
			new Case("PUT", "/v0/entity?id=kept", "If-Match: \"1234\"\r\n", 412, "ETag: \""),
			new Case("PUT", "/v0/entity?id=created", "If-None-Match: *\r\n", 201, "ETag: \""),
			new Case("PUT", "/v0/entity?id=created", "If-None-Match: *\r\n", 412, "not applied"),
			new Case("DELETE", "/v0/entity?id=kept", "If-Match: \"deadbeef\"\r\n", 412, "not applied"),
			new Case("PUT", "/v0/entity?id=kept", "If-Match: deadbeef\r\n", 400, "malformed If-Match header"),
			new Case("DELETE", "/v0/entity?id=kept", "If-None-Match: \"a\" \"b\"\r\n", 400,
					"malformed If-None-Match header"),
			new Case("PUT", "/v0/entity?id=kept", "If-Match: \r\n", 400, "malformed If-Match header"),
			new Case("GET", "/v0/entity?id=kept", 200, ""),
			// a read's If-None-Match is still a 304
			new Case("GET", "/v0/entity?id=kept", "If-None-Match: *\r\n", 304, ""),
			new Case("GET", "/v0/entity?id=kept&consistency=serial", 200, "ETag: \""),
			new Case("GET", "/v0/entity?id=kept&consistency=eventual", 400, "consistency must be 'serial'"),
			// neither tag is the current version: the delete holds
			new Case("DELETE", "/v0/entity?id=kept", "If-None-Match: W/\"a\", \"b\"\r\n", 202, ""),
			new Case("GET", "/v0/entity?id=kept", 404, ""),
			new Case("PUT", "/v0/entity?id=kept", "If-Match: *\r\n", 412, "precondition failed"),
			new Case("PUT", "/v0/entity?id=kept&ack=1", "If-Match: *\r\n", 400, "uses a majority"));

	@Test
	void aConditionalWriteIsAppliedOnlyWhenItsConditionHolds() throws IOException {
		check(CONDITIONS);
	}

	/** Errors answered before any handler of ours runs have a text body too. */
	static final List<Case> BEFORE_HANDLERS = List.of(
			new Case("GET", "/v1/entity?id=x", 404, "no such path: /v1/entity"),
			new Case("GET", "/v1/entity?id=x", 404, "Content-Type: text/plain"),
			new Case("PUT", "/", 404, "no such path: /"),
			new Case("GET", "/v0/entity?id=%ZZ", 400, "malformed request target"),
			new Case("GET", "/v0/entity?id=a|b", 400, "malformed request target"),
			new Case("PATCH", "/v0/entity?id=k", 405, "allowed: GET, HEAD, PUT, DELETE"),
			new Case("GET", "/v0/entity?id=%C3%A9", 404, "not found"), new Case("GET", "/v0/entity?id=\u00c3\u00a9",
					400, "raw byte 0xc3 in id at character 0: percent-encode it (%C3)"));

	@Test
	void errorsAnsweredBeforeOurHandlersHaveATextBody() throws IOException {
		check(BEFORE_HANDLERS);
	}

	/**
	 * Every byte value raw in a key, {@code ?id=k<byte>z}: printable ASCII is taken as
	 * itself (the key reads back when asked for percent-encoded), but for the few bytes
	 * that end the query or a parameter ({@code #}, {@code &}) or that a URI may not
	 * hold; every other byte is a 400 with a text body, but for the whitespace that
	 * breaks the request line, which Reactor Netty's HTTP decoder refuses with an empty
	 * 400 and a closed connection (docs/api.md, Keys).
	 */
	@Test
	void everyRawByteInAKeyIsTakenAsItselfOrRefusedWithAReason() throws IOException {
		String refusedByUri = "\"%<>\\^`{|}";
		String decoderBreaks = "\t\n\u000b\f\r ";
		for (int b = 0; b < 256; b++) {
			char c = (char) b;
			String hex = String.format("%%%02X", b);
			RawHttp.Answer put = sendBytes(raw("PUT /v0/entity?id=k", b,
					"z HTTP/1.1\r\nHost: localhost\r\n" + "Content-Length: 1\r\nConnection: close\r\n\r\nv"));
			if (c == '#') {
				// The fragment: the key is "k", the rest never reaches the server's
				// query.
				assertThat(put.status()).as(hex).isEqualTo(201);
				check(List.of(new Case("GET", "/v0/entity?id=k%23z", 404, "not found")));
			}
			else if (c == '&') {
				assertThat(put.status()).as(hex).isEqualTo(400);
				assertThat(put.body()).as(hex).contains("unknown parameter 'z'");
			}
			else if (c > ' ' && c < 0x7F && refusedByUri.indexOf(c) < 0) {
				assertThat(put.status()).as("%s -> %s", hex, put.head()).isEqualTo(201);
				check(List.of(new Case("GET", "/v0/entity?id=k" + hex + "z", 200, "\r\n\r\nv")));
			}
			else if (decoderBreaks.indexOf(c) >= 0) {
				assertThat(put.status()).as("%s -> %s", hex, put.head()).isEqualTo(400);
			}
			else {
				assertThat(put.status()).as("%s -> %s", hex, put.head()).isEqualTo(400);
				assertThat(put.body()).as(hex).containsAnyOf("percent-encode", "malformed request target");
			}
		}
	}

	private static byte[] raw(String head, int b, String tail) {
		byte[] first = head.getBytes(StandardCharsets.ISO_8859_1);
		byte[] last = tail.getBytes(StandardCharsets.ISO_8859_1);
		byte[] request = new byte[first.length + 1 + last.length];
		System.arraycopy(first, 0, request, 0, first.length);
		request[first.length] = (byte) b;
		System.arraycopy(last, 0, request, first.length + 1, last.length);
		return request;
	}

	private void check(List<Case> cases) throws IOException {
		for (Case c : cases) {
			RawHttp.Answer answer = send(c);
			assertThat(answer.status()).as("%s -> %s", c, answer.head()).isEqualTo(c.status());
			assertThat(answer.head() + "\r\n\r\n" + answer.body()).as("%s", c).contains(c.body());
			if (c.status() >= 400 && !c.method().equals("HEAD")) {
				assertThat(answer.body()).as("%s: the body of a %d", c, c.status()).isNotBlank();
			}
		}
	}

	/**
	 * Sends the case byte for byte and reads the answer to its end (the server closes the
	 * connection: {@code Connection: close}). Unlike {@link RawHttp} it does not
	 * half-close its side first, which would abort a streamed range before its records.
	 */
	private RawHttp.Answer send(Case c) throws IOException {
		String request = c.method() + " " + c.target() + " HTTP/1.1\r\nHost: localhost\r\n" + c.headers()
				+ "Content-Length: 0\r\nConnection: close\r\n\r\n";
		RawHttp.Answer answer = sendBytes(request.getBytes(StandardCharsets.ISO_8859_1));
		assertThat(answer.status()).as("%s: %s", c, answer.head()).isPositive();
		return answer;
	}

	private RawHttp.Answer sendBytes(byte[] request) throws IOException {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", this.port), 5_000);
			socket.setSoTimeout(10_000);
			socket.getOutputStream().write(request);
			socket.getOutputStream().flush();
			String text = new String(socket.getInputStream().readNBytes(1 << 20), StandardCharsets.ISO_8859_1);
			int split = text.indexOf("\r\n\r\n");
			if (!text.startsWith("HTTP/1.1 ") || split < 0) {
				return new RawHttp.Answer(-1, text, "");
			}
			return new RawHttp.Answer(Integer.parseInt(text.substring(9, 12)), text.substring(0, split),
					text.substring(split + 4));
		}
	}

	private static String header(RawHttp.Answer answer, String name) {
		for (String line : answer.head().split("\r\n")) {
			if (line.regionMatches(true, 0, name + ":", 0, name.length() + 1)) {
				return line.substring(name.length() + 1).strip();
			}
		}
		return null;
	}

}
