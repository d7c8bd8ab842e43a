package io.quorumkv.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import io.quorumkv.service.support.StreamCalls;
import io.quorumkv.service.QuorumKvApplication;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.support.RawExchange;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Every spelling of an internal path that a client can send without the cluster secret is
 * refused (401 or 403) or matches nothing (404), and never reaches the storage:
 * percent-encoded letters, matrix parameters, doubled slashes, dot segments and other
 * letter cases, for each internal route and method. And with the secret, the internal
 * routes read their parameters as strictly as the public ones: a parameter a route does
 * not read, known elsewhere or not, and one given twice, are a 400 naming it, checked
 * after the secret (a caller without it learns nothing of the routes' parameters); a
 * route's own parameters still work.
 */
@SpringBootTest(classes = QuorumKvApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "quorumkv.cluster.secret=internal-path-forms-secret")
@DirtiesContext
class InternalPathFormsTest {

	private static final List<String> FORMS = List.of("/internal/v0/{op}", "/%69nternal/v0/{op}", "/%49nternal/v0/{op}",
			"/internal;x/v0/{op}", "/internal/v0;x/{op}", "/internal;x=1/v0;y/{op}", "//internal/v0/{op}",
			"/internal//v0/{op}", "/./internal/v0/{op}", "/v0/../internal/v0/{op}", "/v0/%2e%2e/internal/v0/{op}",
			"/INTERNAL/v0/{op}", "/Internal/v0/{op}", "/internal/V0/{op}", "/internal%2Fv0/{op}", "/internal/v0/{op}/",
			"/internal/v0/{op};z");

	private static final String SECRET_HEADER = InternalApi.SECRET + ": internal-path-forms-secret";

	/** Every internal route: method, path, a query it reads (may be empty). */
	private static final List<String[]> ROUTES = List.of(new String[] { "POST", "/internal/v0/stream", "" },
			new String[] { "GET", InternalApi.TRANSFER_PATH, "change=c&start=a&rate=10&for=n" },
			new String[] { "GET", InternalApi.ENTRIES_PATH, "start=a&end=b&limit=2" },
			new String[] { "POST", InternalApi.REPAIR_TREES_PATH, "scope=all" },
			new String[] { "POST", InternalApi.REPAIR_NODES_PATH, "" },
			new String[] { "POST", InternalApi.REPAIR_DIGESTS_PATH, "" },
			new String[] { "POST", InternalApi.REPAIR_DONE_PATH, "scope=all" },
			new String[] { "DELETE", InternalApi.REPAIR_SESSION_PATH, "id=00" },
			new String[] { "GET", InternalApi.RING_PATH, "" }, new String[] { "GET", InternalApi.TRANSFERS_PATH, "" },
			new String[] { "GET", InternalApi.CLEANUP_PATH, "" },
			new String[] { "GET", InternalApi.RING_IDENTITY_PATH, "" },
			new String[] { "POST", InternalApi.RING_JOIN_PATH, "url=http://127.0.0.1:1" },
			new String[] { "POST", InternalApi.RAFT_PATH + "/append", "" });

	@TempDir
	static Path data;

	@DynamicPropertySource
	static void storage(DynamicPropertyRegistry registry) {
		registry.add("quorumkv.storage.path", () -> data.resolve("node").toString());
	}

	@LocalServerPort
	int port;

	@Autowired
	Storage storage;

	@Test
	void noFormOfAnInternalPathIsServedWithoutTheSecret() {
		byte[] forgedWrite = StreamCalls.upsert(Entry.value(bytes("forged"), bytes("x"), Long.MAX_VALUE));
		for (String form : FORMS) {
			for (String[] header : List.of(new String[0], new String[] { InternalApi.SECRET + ": wrong" })) {
				int write = status(request("POST", form.replace("{op}", "stream"), forgedWrite, header));
				int scan = status(request("GET", form.replace("{op}", "entries") + "?start=a", null, header));
				for (int status : List.of(write, scan)) {
					assertThat(status).as(form + " with " + header.length + " secret header(s)").isIn(401, 403, 404);
				}
			}
		}
		assertThat(this.storage.get(bytes("forged")).block(Duration.ofSeconds(5))).isNull();
	}

	@Test
	void theRealPathWithTheSecretIsServedWhichShowsTheRefusalsAboveAreNotForWantOfARoute() {
		byte[] read = StreamCalls.get(bytes("absent"));
		int status = status(request("POST", "/internal/v0/stream", read,
				new String[] { InternalApi.SECRET + ": internal-path-forms-secret" }));
		assertThat(status).isEqualTo(200);
		int encoded = status(request("POST", "/%69nternal/v0/stream", read,
				new String[] { InternalApi.SECRET + ": internal-path-forms-secret" }));
		assertThat(encoded).as("the encoded form matches the route, and is served with the secret").isEqualTo(200);
		int refused = status(request("POST", "/%69nternal/v0/stream", read, new String[0]));
		assertThat(refused).as("the encoded form matches the route, so the secret is checked").isEqualTo(401);
	}

	@Test
	void anUnknownParameterOnAnInternalRouteIsA400NamingIt() {
		for (String[] route : ROUTES) {
			String query = route[2].isEmpty() ? "bogus=1" : route[2] + "&bogus=1";
			RawExchange answer = send(route[0], route[1] + "?" + query, SECRET_HEADER);
			assertThat(answer.status()).as(route[0] + " " + route[1]).isEqualTo(400);
			assertThat(body(answer)).as(route[0] + " " + route[1])
				.contains("unknown parameter 'bogus' for " + route[0] + " " + route[1]);
		}
	}

	@Test
	void aParameterOfAnotherRouteOrGivenTwiceIsA400() {
		RawExchange other = send("GET", InternalApi.ENTRIES_PATH + "?start=a&scope=all", SECRET_HEADER);
		assertThat(other.status()).isEqualTo(400);
		assertThat(body(other)).contains("unknown parameter 'scope' for GET " + InternalApi.ENTRIES_PATH);
		RawExchange ttl = send("GET", InternalApi.ENTRIES_PATH + "?start=a&ttl=2", SECRET_HEADER);
		assertThat(ttl.status()).isEqualTo(400);
		assertThat(body(ttl)).contains("'ttl'");
		RawExchange twice = send("GET", InternalApi.ENTRIES_PATH + "?start=a&limit=1&limit=2", SECRET_HEADER);
		assertThat(twice.status()).isEqualTo(400);
		assertThat(body(twice)).contains("more than once");
	}

	@Test
	void withoutTheSecretTheRefusalComesFirst() {
		RawExchange answer = send("GET", InternalApi.ENTRIES_PATH + "?start=a&bogus=1");
		assertThat(answer.status()).isIn(401, 403);
		assertThat(body(answer)).doesNotContain("bogus");
	}

	@Test
	void aRoutesOwnParametersAreServed() {
		assertThat(send("GET", InternalApi.ENTRIES_PATH + "?start=a&end=b&limit=2", SECRET_HEADER).status())
			.isEqualTo(200);
		assertThat(send("GET", InternalApi.RING_PATH, SECRET_HEADER).status()).isEqualTo(200);
	}

	private RawExchange send(String method, String target, String... headers) {
		StringBuilder head = new StringBuilder(method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n");
		for (String header : headers) {
			head.append(header).append("\r\n");
		}
		if (!method.equals("GET")) {
			head.append("Content-Length: 0\r\n");
		}
		head.append("Connection: close\r\n\r\n");
		RawExchange exchange = RawExchange.send(this.port, head.toString().getBytes(StandardCharsets.ISO_8859_1), true,
				Duration.ofSeconds(10));
		assertThat(exchange.hung()).as(method + " " + target).isFalse();
		return exchange;
	}

	private static String body(RawExchange exchange) {
		return exchange.body();
	}

	private int status(byte[] request) {
		RawExchange exchange = RawExchange.send(this.port, request, true, Duration.ofSeconds(10));
		assertThat(exchange.hung()).isFalse();
		return exchange.status();
	}

	private static byte[] request(String method, String target, byte[] body, String[] headers, String... more) {
		StringBuilder head = new StringBuilder(method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n");
		for (String header : headers) {
			head.append(header).append("\r\n");
		}
		for (String header : more) {
			head.append(header).append("\r\n");
		}
		if (body != null) {
			head.append("Content-Length: ").append(body.length).append("\r\n");
		}
		head.append("Connection: close\r\n\r\n");
		byte[] start = head.toString().getBytes(StandardCharsets.ISO_8859_1);
		if (body == null) {
			return start;
		}
		byte[] all = new byte[start.length + body.length];
		System.arraycopy(start, 0, all, 0, start.length);
		System.arraycopy(body, 0, all, start.length, body.length);
		return all;
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
