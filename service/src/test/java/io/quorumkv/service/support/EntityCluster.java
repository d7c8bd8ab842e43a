package io.quorumkv.service.support;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * Three real nodes in this JVM ({@link TestCluster}) and a blocking HTTP/1.1 client of
 * their public {@code /v0/entity} API, for tests of conditional writes and serial reads.
 * Close it to stop the nodes.
 */
public final class EntityCluster implements AutoCloseable {

	private final TestCluster cluster;

	private final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	private EntityCluster(TestCluster cluster) {
		this.cluster = cluster;
	}

	/**
	 * The public API of the nodes of {@code cluster}, which its owner starts and closes
	 * (closing this closes it too).
	 */
	public static EntityCluster over(TestCluster cluster) {
		return new EntityCluster(cluster);
	}

	/** Starts three nodes with data folders under {@code root}. */
	public static EntityCluster start(Path root) {
		return new EntityCluster(new TestCluster(root, 3, Map.of()).startAll());
	}

	public int size() {
		return 3;
	}

	/**
	 * Sends {@code method} to node {@code node}'s {@code /v0/entity?query}, with
	 * {@code headers} as name, value pairs; waits at most 20 s for the answer.
	 */
	public HttpResponse<String> send(int node, String method, String query, @Nullable String body, String... headers)
			throws IOException, InterruptedException {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(this.cluster.url(node) + "/v0/entity?" + query))
			.timeout(Duration.ofSeconds(20))
			.method(method,
					(body == null) ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
		for (int i = 0; i < headers.length; i += 2) {
			request.header(headers[i], headers[i + 1]);
		}
		return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	/** The {@code ETag} of {@code response}, or null. */
	public static @Nullable String etag(HttpResponse<?> response) {
		return response.headers().firstValue("ETag").orElse(null);
	}

	@Override
	public void close() {
		this.cluster.close();
	}

}
