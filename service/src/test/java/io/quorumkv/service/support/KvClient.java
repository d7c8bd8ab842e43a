package io.quorumkv.service.support;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import io.quorumkv.storage.Entry;
import io.quorumkv.service.peer.InternalApi;
import org.jspecify.annotations.Nullable;

/**
 * A small blocking client of the public and internal API for fault tests. Every call has
 * a timeout; a transport failure (connection refused, reset, timeout) is status -1.
 */
public final class KvClient {

	/** What one node's own storage holds for a key through the internal API. */
	public record Local(int status, @Nullable String value, boolean tombstone) {

		public boolean absent() {
			return this.status == 404;
		}

	}

	private final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(2))
		.build();

	private final Duration timeout;

	public KvClient(Duration timeout) {
		this.timeout = timeout;
	}

	public int put(String baseUrl, String key, String value, String replicas) {
		return send(HttpRequest.newBuilder(entity(baseUrl, key, replicas))
			.PUT(HttpRequest.BodyPublishers.ofString(value))).status;
	}

	/** Status and body of a PUT. */
	public Answer putAnswer(String baseUrl, String key, String value, String replicas) {
		return send(
				HttpRequest.newBuilder(entity(baseUrl, key, replicas)).PUT(HttpRequest.BodyPublishers.ofString(value)));
	}

	public int delete(String baseUrl, String key, String replicas) {
		return send(HttpRequest.newBuilder(entity(baseUrl, key, replicas)).DELETE()).status;
	}

	/** Status and body of a public GET. */
	public Answer get(String baseUrl, String key, String replicas) {
		return send(HttpRequest.newBuilder(entity(baseUrl, key, replicas)).GET());
	}

	/**
	 * What the node's own storage holds for a key, read on its replica stream: 200 with
	 * the value (or a tombstone), 404 when absent; the status of a refusal or -1 when the
	 * node did not answer.
	 */
	public Local local(String baseUrl, String key) {
		try {
			HttpResponse<byte[]> response = this.http
				.send(HttpRequest.newBuilder(URI.create(baseUrl + StreamCalls.PATH))
					.header(InternalApi.SECRET, NodeProcesses.SECRET)
					.POST(HttpRequest.BodyPublishers.ofByteArray(StreamCalls.get(key.getBytes(StandardCharsets.UTF_8))))
					.timeout(this.timeout)
					.build(), HttpResponse.BodyHandlers.ofByteArray());
			if (response.statusCode() != 200) {
				return new Local(response.statusCode(), null, false);
			}
			Entry entry = StreamCalls.entry(response.body());
			if (entry == null) {
				return new Local(404, null, false);
			}
			byte[] value = entry.value();
			return new Local(200, (value != null) ? new String(value, StandardCharsets.UTF_8) : "", value == null);
		}
		catch (IOException | RuntimeException ex) {
			return new Local(-1, null, false);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return new Local(-1, null, false);
		}
	}

	/** A POST of a JSON body to an admin path on a node, with the test admin key. */
	public Answer postAdmin(String baseUrl, String path, String json) {
		return send(HttpRequest.newBuilder(URI.create(baseUrl + path))
			.header("Content-Type", "application/json")
			.header("Authorization", TestKeys.bearer(TestKeys.ADMIN))
			.POST(HttpRequest.BodyPublishers.ofString(json)));
	}

	/** A GET of an admin path on a node, with the test admin key. */
	public Answer getAdmin(String baseUrl, String path) {
		return send(HttpRequest.newBuilder(URI.create(baseUrl + path))
			.header("Authorization", TestKeys.bearer(TestKeys.ADMIN))
			.GET());
	}

	/** A GET of an internal path on a node, with the cluster secret. */
	public Answer getInternal(String baseUrl, String path) {
		return send(HttpRequest.newBuilder(URI.create(baseUrl + path))
			.header(InternalApi.SECRET, NodeProcesses.SECRET)
			.GET());
	}

	/** A GET of any path on a node; the body as text. */
	public Answer getPath(String baseUrl, String pathAndQuery) {
		return send(HttpRequest.newBuilder(URI.create(baseUrl + pathAndQuery)).GET());
	}

	public record Answer(int status, String body, boolean tombstone) {

	}

	private URI entity(String baseUrl, String key, String replicas) {
		return URI.create(baseUrl + "/v0/entity?id="
				+ URLEncoder.encode(key, StandardCharsets.UTF_8).replace("+", "%20") + "&replicas=" + replicas);
	}

	private Answer send(HttpRequest.Builder request) {
		try {
			HttpResponse<String> response = this.http.send(request.timeout(this.timeout).build(),
					HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
			return new Answer(response.statusCode(), response.body(), false);
		}
		catch (IOException ex) {
			return new Answer(-1, ex.toString(), false);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return new Answer(-1, "interrupted", false);
		}
	}

}
