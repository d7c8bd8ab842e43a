package io.quorumkv.service.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;

import javax.net.ssl.SSLContext;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;

/**
 * A stand-in for the Kubernetes API server, on loopback over TLS with a certificate of a
 * CA of its own: it answers {@code GET /apis/apps/v1/namespaces/{ns}/statefulsets/{name}}
 * with what the test sets ({@link #answer}) to a request bearing the token of
 * {@link #writeServiceAccount}, 401 to any other, 404 to any other path. What a pod's
 * projected token volume holds ({@code token}, {@code ca.crt}, {@code namespace}) is
 * written by {@link #writeServiceAccount}. Close it to stop it.
 */
public final class StandInKubernetesApi implements AutoCloseable {

	public static final String TOKEN = "stand-in-service-account-token";

	private final TestCertificates.Authority authority = TestCertificates.Authority.create("stand-in kubernetes ca");

	private final HttpsServer server;

	private final String namespace;

	private final String statefulSet;

	private final List<String> requests = new CopyOnWriteArrayList<>();

	private volatile int status = 200;

	private volatile String body = "{}";

	public StandInKubernetesApi(String namespace, String statefulSet) {
		this.namespace = namespace;
		this.statefulSet = statefulSet;
		try {
			this.server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
			SSLContext context = SSLContext.getInstance("TLS");
			context.init(this.authority.issue("127.0.0.1", "127.0.0.1", "localhost").keyManagers().getKeyManagers(),
					null, null);
			this.server.setHttpsConfigurator(new HttpsConfigurator(context));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (java.security.GeneralSecurityException ex) {
			throw new IllegalStateException(ex);
		}
		this.server.setExecutor(Executors.newSingleThreadExecutor());
		this.server.createContext("/", this::handle);
		this.server.start();
	}

	/**
	 * The StatefulSet's answer with {@code spec.replicas}, as the API server gives it.
	 */
	public StandInKubernetesApi replicas(int replicas) {
		return answer(200, """
				{"apiVersion":"apps/v1","kind":"StatefulSet",\
				"metadata":{"name":"%s","namespace":"%s"},\
				"spec":{"replicas":%d,"serviceName":"%s"},\
				"status":{"replicas":%d}}""".formatted(this.statefulSet, this.namespace, replicas, this.statefulSet,
				replicas));
	}

	/** Any answer to the StatefulSet's path. */
	public StandInKubernetesApi answer(int status, String body) {
		this.status = status;
		this.body = body;
		return this;
	}

	/** {@code https://127.0.0.1:<port>}. */
	public String url() {
		return "https://127.0.0.1:" + this.server.getAddress().getPort();
	}

	/** Writes {@code token}, {@code ca.crt} and {@code namespace} into {@code folder}. */
	public Path writeServiceAccount(Path folder) {
		try {
			Files.createDirectories(folder);
			Files.writeString(folder.resolve("token"), TOKEN + "\n");
			Files.writeString(folder.resolve("namespace"), this.namespace);
			this.authority.writePem(folder, "ca");
			return folder;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** The paths asked, in order. */
	public List<String> requests() {
		return List.copyOf(this.requests);
	}

	private void handle(HttpExchange exchange) throws IOException {
		try (exchange) {
			String path = exchange.getRequestURI().getRawPath();
			this.requests.add(exchange.getRequestMethod() + " " + path);
			int code;
			String reply;
			if (!("Bearer " + TOKEN).equals(exchange.getRequestHeaders().getFirst("Authorization"))) {
				code = 401;
				reply = "{\"kind\":\"Status\",\"code\":401,\"reason\":\"Unauthorized\"}";
			}
			else if (exchange.getRequestMethod().equals("GET") && path
				.equals("/apis/apps/v1/namespaces/" + this.namespace + "/statefulsets/" + this.statefulSet)) {
				code = this.status;
				reply = this.body;
			}
			else {
				code = 404;
				reply = "{\"kind\":\"Status\",\"code\":404,\"reason\":\"NotFound\"}";
			}
			byte[] bytes = reply.getBytes(StandardCharsets.UTF_8);
			exchange.getResponseHeaders().set("Content-Type", "application/json");
			exchange.sendResponseHeaders(code, bytes.length);
			exchange.getResponseBody().write(bytes);
		}
	}

	@Override
	public void close() {
		this.server.stop(0);
		((java.util.concurrent.ExecutorService) this.server.getExecutor()).shutdownNow();
	}

}
