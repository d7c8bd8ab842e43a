package io.quorumkv.service.prestop;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads a StatefulSet's scale from the Kubernetes API ({@code GET
 * /apis/apps/v1/namespaces/{ns}/statefulsets/{name}}) with the pod's projected
 * service-account token and the API server's CA, and says whether a pod of a given
 * ordinal is being scaled away: its ordinal is outside
 * {@code [spec.ordinals.start, start + spec.replicas)}. Every way of not knowing (no
 * address, no token, unreachable, refused, not JSON, no {@code spec.replicas}) is an
 * {@link Unknown} with the reason, never an exception.
 */
final class StatefulSetScale {

	/** What the API said about the pod; {@link Known} or {@link Unknown}. */
	sealed interface Answer permits Known, Unknown {

	}

	/**
	 * The StatefulSet's scale: its pods are the ordinals
	 * {@code [start, start + replicas)}.
	 */
	record Known(int start, int replicas) implements Answer {

		boolean scalesAway(int ordinal) {
			return ordinal < this.start || ordinal >= (long) this.start + this.replicas;
		}

	}

	/** Why the scale is not known. */
	record Unknown(String reason) implements Answer {

	}

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	/**
	 * Tries when the API cannot be reached or answers 5xx, 1 s apart (an API server
	 * restarting or a connection lost); a refusal or a TLS failure is final.
	 */
	private static final int ATTEMPTS = 3;

	private final PreStopSettings settings;

	private final PreStopLog log;

	StatefulSetScale(PreStopSettings settings, PreStopLog log) {
		this.settings = settings;
		this.log = log;
	}

	Answer read() {
		URI api = this.settings.kubernetesApi();
		if (api == null) {
			return new Unknown("no address of the Kubernetes API (KUBERNETES_SERVICE_HOST or QKV_KUBERNETES_API)");
		}
		Path folder = this.settings.serviceAccount();
		String namespace = this.settings.namespace();
		String token;
		try {
			if (namespace == null) {
				namespace = Files.readString(folder.resolve("namespace")).strip();
			}
			token = Files.readString(folder.resolve("token")).strip();
		}
		catch (IOException ex) {
			return new Unknown("cannot read the service-account token or namespace in " + folder + ": " + ex);
		}
		HttpClient client;
		try {
			HttpClient.Builder builder = HttpClient.newBuilder()
				.connectTimeout(TIMEOUT)
				.version(HttpClient.Version.HTTP_1_1);
			if ("https".equals(api.getScheme())) {
				builder.sslContext(PemTrust.context(folder.resolve("ca.crt")));
			}
			client = builder.build();
		}
		catch (IOException | GeneralSecurityException ex) {
			return new Unknown("cannot read the API server's CA " + folder.resolve("ca.crt") + ": " + ex);
		}
		URI uri = api.resolve("/apis/apps/v1/namespaces/" + segment(namespace) + "/statefulsets/"
				+ segment(this.settings.statefulSet()));
		try (client) {
			return get(client, uri, token);
		}
	}

	private Answer get(HttpClient client, URI uri, String token) {
		HttpRequest request = HttpRequest.newBuilder(uri)
			.timeout(TIMEOUT)
			.header("Authorization", "Bearer " + token)
			.header("Accept", "application/json")
			.GET()
			.build();
		String failure = "";
		for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
			try {
				HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
				if (response.statusCode() == 200) {
					return parse(uri, response.body());
				}
				failure = "GET " + uri + " answered " + response.statusCode() + ": " + brief(response.body());
				if (response.statusCode() < 500) {
					return new Unknown(failure);
				}
			}
			catch (javax.net.ssl.SSLException ex) {
				// A certificate the CA does not vouch for does not heal in a second.
				return new Unknown("GET " + uri + " failed: " + ex);
			}
			catch (IOException ex) {
				failure = "GET " + uri + " failed: " + ex;
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return new Unknown("interrupted while reading " + uri);
			}
			if (attempt < ATTEMPTS) {
				this.log.info(failure + "; trying again (" + attempt + " of " + ATTEMPTS + ")");
				sleep(Duration.ofSeconds(1));
			}
		}
		return new Unknown(failure);
	}

	static Answer parse(URI uri, String body) {
		JsonNode root;
		try {
			root = JsonMapper.builder().build().readTree(body);
		}
		catch (JacksonException ex) {
			return new Unknown(uri + " answered what is not JSON: " + brief(body));
		}
		JsonNode replicas = root.path("spec").path("replicas");
		if (!replicas.isIntegralNumber() || replicas.asLong() < 0 || replicas.asLong() > Integer.MAX_VALUE) {
			return new Unknown(uri + " answered no spec.replicas: " + brief(body));
		}
		JsonNode start = root.path("spec").path("ordinals").path("start");
		if (!start.isMissingNode()
				&& (!start.isIntegralNumber() || start.asLong() < 0 || start.asLong() > Integer.MAX_VALUE)) {
			return new Unknown(uri + " answered a spec.ordinals.start that is not an ordinal: " + brief(body));
		}
		return new Known(start.isMissingNode() ? 0 : start.asInt(), replicas.asInt());
	}

	private static String segment(String name) {
		return URLEncoder.encode(name, StandardCharsets.UTF_8);
	}

	static String brief(@Nullable String body) {
		if (body == null) {
			return "";
		}
		String flat = body.replaceAll("\\s+", " ").strip();
		return (flat.length() <= 200) ? flat : flat.substring(0, 200) + "...";
	}

	static void sleep(Duration duration) {
		try {
			Thread.sleep(duration);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
