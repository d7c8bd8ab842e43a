package io.quorumkv.service.support;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.function.IntFunction;

import org.jspecify.annotations.Nullable;

/**
 * Real nodes (three in this JVM, {@link TestCluster}, or processes at known URLs) and a
 * blocking HTTP/1.1 client of their public {@code /v0/entity} API, for tests of
 * conditional writes and serial reads. Close it to stop the nodes it started.
 */
public final class EntityCluster implements AutoCloseable {

	private final IntFunction<String> urls;

	private final Duration timeout;

	private final Runnable close;

	private final HttpClient http;

	private EntityCluster(IntFunction<String> urls, Duration timeout, Duration connectTimeout, Runnable close) {
		this.urls = urls;
		this.timeout = timeout;
		this.close = close;
		this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(connectTimeout).build();
	}

	/**
	 * The public API of the nodes of {@code cluster}, which its owner starts and closes
	 * (closing this closes it too).
	 */
	public static EntityCluster over(TestCluster cluster) {
		return new EntityCluster(cluster::url, Duration.ofSeconds(20), Duration.ofSeconds(5), cluster::close);
	}

	/** Starts three nodes with data folders under {@code root}. */
	public static EntityCluster start(Path root) {
		return over(new TestCluster(root, 3, Map.of()).startAll());
	}

	/**
	 * The public API of nodes that run elsewhere (node {@code n} at {@code urls(n)}),
	 * each answer awaited at most {@code timeout}; closing this stops nothing.
	 */
	public static EntityCluster at(IntFunction<String> urls, Duration timeout) {
		return new EntityCluster(urls, timeout, Duration.ofSeconds(1), () -> {
		});
	}

	public int size() {
		return 3;
	}

	/**
	 * Sends {@code method} to node {@code node}'s {@code /v0/entity?query}, with
	 * {@code headers} as name, value pairs; waits at most 20 s for the answer (in this
	 * JVM; else the timeout given).
	 */
	public HttpResponse<String> send(int node, String method, String query, @Nullable String body, String... headers)
			throws IOException, InterruptedException {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(this.urls.apply(node) + "/v0/entity?" + query))
			.timeout(this.timeout)
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
		this.close.run();
	}

}
