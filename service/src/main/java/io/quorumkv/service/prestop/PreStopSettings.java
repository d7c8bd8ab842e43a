package io.quorumkv.service.prestop;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * What the pre-stop program reads from its environment, checked once here. Every name is
 * one the pod's manifest sets (docs/kubernetes.md, "Scaling down"):
 * <ul>
 * <li>{@code POD_NAME} (else {@code HOSTNAME}): {@code <statefulset>-<ordinal>};</li>
 * <li>{@code QKV_STATEFULSET}: the StatefulSet's name, by default the pod's name without
 * {@code -<ordinal>};</li>
 * <li>{@code POD_NAMESPACE}, else the file {@code namespace} of the token folder;</li>
 * <li>{@code QKV_KUBERNETES_API} (a URL), else
 * {@code https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT};</li>
 * <li>{@code QKV_SERVICEACCOUNT}: the folder of the projected token volume
 * ({@code token}, {@code ca.crt}, {@code namespace}), by default
 * {@value #DEFAULT_SERVICEACCOUNT};</li>
 * <li>{@code QUORUMKV_CLUSTER_SELF}: this node's URL, the one to decommission;</li>
 * <li>{@code QKV_NODES} (comma-separated management URLs, the first that answers is
 * asked; by default {@value #DEFAULT_NODES}), {@code QKV_ADMIN_KEY} and
 * {@code QKV_CACERT}: as for {@code scripts/qkv};</li>
 * <li>{@code QKV_PRESTOP_DRAIN} (5 s): the wait of a pod that stays, so that it leaves
 * the Service's endpoints before SIGTERM; {@code QKV_PRESTOP_LIMIT} (10 min): the longest
 * wait for a decommission to end; {@code QKV_PRESTOP_POLL} (2 s); durations as
 * {@code 500ms}, {@code 5s}, {@code 10m}, or seconds.</li>
 * </ul>
 */
record PreStopSettings(String pod, @Nullable Integer ordinal, String statefulSet, @Nullable String namespace,
		@Nullable URI kubernetesApi, Path serviceAccount, @Nullable String self, List<URI> nodes,
		@Nullable String adminKey, @Nullable Path caCert, Duration drain, Duration limit, Duration poll) {

	static final String DEFAULT_SERVICEACCOUNT = "/var/run/secrets/quorumkv/serviceaccount";

	static final String DEFAULT_NODES = "https://localhost:9080";

	PreStopSettings {
		nodes = List.copyOf(nodes);
	}

	/**
	 * The settings in {@code env}; throws {@link IllegalArgumentException} naming what is
	 * wrong (a duration that does not parse, a URL that is not one).
	 */
	static PreStopSettings from(Map<String, String> env) {
		String pod = value(env, "POD_NAME");
		if (pod == null) {
			pod = value(env, "HOSTNAME");
		}
		if (pod == null) {
			throw new IllegalArgumentException("neither POD_NAME nor HOSTNAME is set: this pod's name is unknown");
		}
		Integer ordinal = ordinal(pod);
		String statefulSet = value(env, "QKV_STATEFULSET");
		if (statefulSet == null) {
			statefulSet = (ordinal != null) ? pod.substring(0, pod.lastIndexOf('-')) : pod;
		}
		URI api = null;
		String apiUrl = value(env, "QKV_KUBERNETES_API");
		if (apiUrl != null) {
			api = uri("QKV_KUBERNETES_API", apiUrl);
		}
		else {
			String host = value(env, "KUBERNETES_SERVICE_HOST");
			String port = value(env, "KUBERNETES_SERVICE_PORT");
			if (host != null) {
				api = uri("KUBERNETES_SERVICE_HOST", "https://" + (host.contains(":") ? "[" + host + "]" : host) + ":"
						+ ((port != null) ? port : "443"));
			}
		}
		String folder = value(env, "QKV_SERVICEACCOUNT");
		List<URI> nodes = new ArrayList<>();
		String list = value(env, "QKV_NODES");
		for (String node : ((list != null) ? list : DEFAULT_NODES).split(",")) {
			if (!node.isBlank()) {
				nodes.add(uri("QKV_NODES", node.strip().replaceAll("/+$", "")));
			}
		}
		String self = value(env, "QUORUMKV_CLUSTER_SELF");
		String caCert = value(env, "QKV_CACERT");
		return new PreStopSettings(pod, ordinal, statefulSet, value(env, "POD_NAMESPACE"), api,
				Path.of((folder != null) ? folder : DEFAULT_SERVICEACCOUNT),
				(self != null) ? self.replaceAll("/+$", "") : null, nodes, value(env, "QKV_ADMIN_KEY"),
				(caCert != null) ? Path.of(caCert) : null, duration(env, "QKV_PRESTOP_DRAIN", Duration.ofSeconds(5)),
				duration(env, "QKV_PRESTOP_LIMIT", Duration.ofMinutes(10)),
				duration(env, "QKV_PRESTOP_POLL", Duration.ofSeconds(2)));
	}

	/**
	 * The number after the last {@code -} of a StatefulSet pod's name, or null when there
	 * is none (not a pod of a StatefulSet).
	 */
	static @Nullable Integer ordinal(String pod) {
		int dash = pod.lastIndexOf('-');
		String digits = pod.substring(dash + 1);
		if (dash <= 0 || digits.isEmpty() || digits.length() > 9 || !digits.chars().allMatch(Character::isDigit)) {
			return null;
		}
		return Integer.valueOf(digits);
	}

	static Duration duration(String text) {
		String value = text.strip();
		try {
			if (value.endsWith("ms")) {
				return Duration.ofMillis(Long.parseLong(value.substring(0, value.length() - 2)));
			}
			if (value.endsWith("s")) {
				return Duration.ofSeconds(Long.parseLong(value.substring(0, value.length() - 1)));
			}
			if (value.endsWith("m")) {
				return Duration.ofMinutes(Long.parseLong(value.substring(0, value.length() - 1)));
			}
			return Duration.ofSeconds(Long.parseLong(value));
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException("not a duration: " + text + " (500ms, 5s, 10m or seconds)");
		}
	}

	private static Duration duration(Map<String, String> env, String name, Duration otherwise) {
		String value = value(env, name);
		if (value == null) {
			return otherwise;
		}
		try {
			Duration parsed = duration(value);
			if (parsed.isNegative()) {
				throw new IllegalArgumentException("a negative duration");
			}
			return parsed;
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException(name + ": " + ex.getMessage());
		}
	}

	private static URI uri(String name, String text) {
		try {
			URI uri = URI.create(text);
			if (uri.getScheme() == null || uri.getHost() == null) {
				throw new IllegalArgumentException("no scheme or host");
			}
			return uri;
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException(name + ": not a URL: " + text);
		}
	}

	private static @Nullable String value(Map<String, String> env, String name) {
		String value = env.get(name);
		return (value == null || value.isBlank()) ? null : value.strip();
	}

}
