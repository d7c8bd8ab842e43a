package io.quorumkv.service.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import io.quorumkv.service.cluster.ClusterProperties;
import io.quorumkv.service.cluster.Topology;
import io.quorumkv.service.security.SecurityProperties;
import io.quorumkv.service.storage.StorageProperties;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * The Kubernetes manifests against the application: every manifest parses; every property
 * the ConfigMap or an environment variable sets exists in the configuration metadata (the
 * node's own, built from its {@code *Properties} records, and Spring Boot's) and the
 * node's settings bind; every port, probe path and mounted file is the one the
 * application uses.
 */
class KubernetesManifestsTest {

	static final Path MANIFESTS = Path.of("..", "deploy", "kubernetes").toAbsolutePath().normalize();

	static final Path DOCKERFILE = Path.of("..", "Dockerfile").toAbsolutePath().normalize();

	static Map<String, Map<String, Object>> byKindAndName = new LinkedHashMap<>();

	static Set<String> properties = new HashSet<>();

	static Set<String> mapProperties = new HashSet<>();

	@BeforeAll
	@SuppressWarnings("unchecked")
	static void load() throws IOException {
		try (Stream<Path> files = Files.list(MANIFESTS)) {
			for (Path file : files.filter((f) -> f.toString().endsWith(".yaml")).sorted().toList()) {
				for (Object document : new Yaml().loadAll(Files.readString(file))) {
					Map<String, Object> manifest = (Map<String, Object>) document;
					assertThat(manifest).as(file.toString()).containsKeys("apiVersion", "kind", "metadata");
					String name = (String) map(manifest, "metadata").get("name");
					byKindAndName.put(manifest.get("kind") + "/" + name, manifest);
				}
			}
		}
		Enumeration<URL> metadata = KubernetesManifestsTest.class.getClassLoader()
			.getResources("META-INF/spring-configuration-metadata.json");
		JsonMapper json = JsonMapper.builder().build();
		while (metadata.hasMoreElements()) {
			try (InputStream in = metadata.nextElement().openStream()) {
				for (JsonNode property : json.readTree(in).path("properties").values()) {
					String name = property.path("name").asString();
					properties.add(name);
					if (property.path("type").asString("").startsWith("java.util.Map<")) {
						mapProperties.add(name);
					}
				}
			}
		}
		assertThat(properties).contains("quorumkv.cluster.tls.bundle", "server.ssl.bundle", "spring.ssl.bundle.pem");
	}

	@Test
	void theManifestsAreTheOnesDescribed() {
		assertThat(byKindAndName).containsKeys("Namespace/quorumkv", "Service/quorumkv", "Service/quorumkv-api",
				"ConfigMap/quorumkv-config", "PodDisruptionBudget/quorumkv", "StatefulSet/quorumkv",
				"NetworkPolicy/quorumkv", "ServiceAccount/quorumkv", "Role/quorumkv-prestop",
				"RoleBinding/quorumkv-prestop");
		byKindAndName.forEach((key, manifest) -> {
			if (!key.startsWith("Namespace/")) {
				assertThat(map(manifest, "metadata").get("namespace")).as(key).isEqualTo("quorumkv");
			}
		});
		assertThat(map(manifest("Service/quorumkv"), "spec")).containsEntry("clusterIP", "None")
			.containsEntry("publishNotReadyAddresses", true);
		Map<String, Object> budget = map(manifest("PodDisruptionBudget/quorumkv"), "spec");
		assertThat(budget.get("maxUnavailable")).isEqualTo(1);
		assertThat(map(map(budget, "selector"), "matchLabels")).isEqualTo(podLabels());
	}

	@Test
	void everyPropertySetExistsAndTheSettingsBind() {
		Map<String, String> settings = settings();
		for (String name : settings.keySet()) {
			assertThat(exists(name)).as("%s is a property of the node or of Spring Boot", name).isTrue();
		}
		for (Map<String, Object> variable : list(container(), "env")) {
			String name = (String) variable.get("name");
			if (name.matches("(QUORUMKV|SPRING|SERVER|MANAGEMENT)_.*")) {
				assertThat(properties.stream().anyMatch((property) -> envForm(property).equals(name)))
					.as("environment variable %s names a property", name)
					.isTrue();
			}
		}
		Map<String, String> withEnvironment = new HashMap<>(settings);
		withEnvironment.put("quorumkv.cluster.secret", "a-secret-from-the-secret");
		Binder binder = new Binder(new MapConfigurationPropertySource(withEnvironment));
		ClusterProperties cluster = binder.bind("quorumkv.cluster", ClusterProperties.class).get();
		StorageProperties storage = binder.bind("quorumkv.storage", StorageProperties.class).get();
		SecurityProperties security = binder.bind("quorumkv.security", SecurityProperties.class).get();
		assertThat(security.publicApi()).isEqualTo(SecurityProperties.PublicApi.AUTHENTICATED);
		assertThat(cluster.tls().mutual()).isTrue();
		assertThat(storage.path()).isEqualTo(Path.of(volumeMount("data")));
		// The node URLs are the pods' stable names under the headless service.
		Map<String, Object> spec = map(manifest("StatefulSet/quorumkv"), "spec");
		int replicas = (Integer) spec.get("replicas");
		List<URI> expected = new ArrayList<>();
		for (int i = 0; i < replicas; i++) {
			expected.add(URI.create("https://quorumkv-" + i + "." + spec.get("serviceName")
					+ ".quorumkv.svc.cluster.local:" + settings.get("server.port")));
		}
		assertThat(cluster.nodes()).isEqualTo(expected);
		String self = env("QUORUMKV_CLUSTER_SELF");
		for (URI url : expected) {
			String pod = url.getHost().substring(0, url.getHost().indexOf('.'));
			Topology.of(cluster.nodes(), URI.create(self.replace("$(POD_NAME)", pod)), null, 8080, true, true);
		}
	}

	@Test
	void portsProbesAndFilesAreTheApplications() throws IOException {
		Map<String, String> settings = settings();
		Map<String, Integer> ports = new HashMap<>();
		for (Map<String, Object> port : list(container(), "ports")) {
			ports.put((String) port.get("name"), (Integer) port.get("containerPort"));
		}
		assertThat(ports).containsEntry("api", Integer.valueOf(settings.get("server.port")))
			.containsEntry("management", Integer.valueOf(settings.get("management.server.port")));
		String dockerfile = Files.readString(DOCKERFILE);
		assertThat(dockerfile).contains("EXPOSE " + ports.get("api") + " " + ports.get("management"))
			.contains("VOLUME " + volumeMount("data"));
		for (String service : List.of("Service/quorumkv", "Service/quorumkv-api")) {
			for (Map<String, Object> port : list(map(manifest(service), "spec"), "ports")) {
				assertThat(ports).as(service).containsKey((String) port.get("targetPort"));
				assertThat(port.get("port")).isEqualTo(ports.get((String) port.get("targetPort")));
			}
		}
		// The probes: Actuator's health groups (management.endpoint.health.probes.enabled
		// in
		// the node's application.yml), on the management port, over TLS like the server.
		assertThat(Files.readString(Path.of("src", "main", "resources", "application.yml")))
			.containsPattern("probes:\\s+enabled: true");
		Map<String, String> probes = Map.of("startupProbe", "/actuator/health/liveness", "livenessProbe",
				"/actuator/health/liveness", "readinessProbe", "/actuator/health/readiness");
		probes.forEach((probe, path) -> {
			Map<String, Object> get = map(map(container(), probe), "httpGet");
			assertThat(get).as(probe)
				.containsEntry("path", path)
				.containsEntry("port", "management")
				.containsEntry("scheme", (settings.get("server.ssl.bundle") != null) ? "HTTPS" : "HTTP");
		});
		// Every file the settings name is in a mounted volume.
		String tls = volumeMount("tls");
		assertThat(settings.get("spring.ssl.bundle.pem.quorumkv.keystore.certificate"))
			.isEqualTo("file:" + tls + "/tls.crt");
		assertThat(settings.get("spring.ssl.bundle.pem.quorumkv.keystore.private-key"))
			.isEqualTo("file:" + tls + "/tls.key");
		assertThat(settings.get("spring.ssl.bundle.pem.quorumkv.truststore.certificate"))
			.isEqualTo("file:" + tls + "/ca.crt");
		assertThat(settings.get("spring.config.import"))
			.isEqualTo("optional:file:" + volumeMount("api-keys") + "/api-keys.yml");
		assertThat(env("SPRING_CONFIG_IMPORT")).isEqualTo("file:" + volumeMount("config") + "/application.yml");
		assertThat(settings.get("server.ssl.bundle")).isEqualTo(settings.get("quorumkv.cluster.tls.bundle"));
	}

	@Test
	void resourcesMatchTheEventLoopsAndShutdownHasTime() {
		Map<String, Object> resources = map(container(), "resources");
		assertThat(map(resources, "requests")).isEqualTo(map(resources, "limits"));
		// One event loop per core the container may use: whole cores.
		assertThat((String) map(resources, "limits").get("cpu")).matches("[1-9][0-9]*");
		Map<String, Object> pod = map(map(map(manifest("StatefulSet/quorumkv"), "spec"), "template"), "spec");
		// The grace bounds the preStop hook and the graceful shutdown after it: a
		// restart's drain, or the longest wait for a decommission, then the shutdown.
		int shutdown = Integer.parseInt(settings().get("spring.lifecycle.timeout-per-shutdown-phase").replace("s", ""));
		long hook = Math.max(PreStopHook.DRAIN.toSeconds(), PreStopHook.limit(env("QKV_PRESTOP_LIMIT")).toSeconds());
		assertThat((Integer) pod.get("terminationGracePeriodSeconds")).isGreaterThan((int) hook + shutdown);
		assertThat(map(pod, "securityContext")).containsEntry("runAsNonRoot", true).containsEntry("runAsUser", 10001);
		List<Map<String, Object>> claims = list(map(manifest("StatefulSet/quorumkv"), "spec"), "volumeClaimTemplates");
		assertThat(claims).extracting((claim) -> map(claim, "metadata").get("name")).containsExactly("data");
	}

	/**
	 * Secure where it runs for real: the "restricted" Pod Security Standard, no
	 * service-account token, never two replicas on one host, and a NetworkPolicy that
	 * lets in the other nodes, labelled clients (API port) and labelled monitoring
	 * (management port) only.
	 */
	@Test
	void podsAreRestrictedAndOnlyNodesClientsAndMonitoringReachThem() {
		Map<String, Object> pod = map(map(map(manifest("StatefulSet/quorumkv"), "spec"), "template"), "spec");
		assertThat(pod).containsEntry("automountServiceAccountToken", false)
			.doesNotContainKeys("hostNetwork", "hostPID", "hostIPC");
		assertThat(map(pod, "securityContext")).containsEntry("runAsNonRoot", true);
		assertThat(map(map(pod, "securityContext"), "seccompProfile")).containsEntry("type", "RuntimeDefault");
		for (Map<String, Object> container : list(pod, "containers")) {
			Map<String, Object> context = map(container, "securityContext");
			assertThat(context).containsEntry("allowPrivilegeEscalation", false);
			assertThat(stringList(map(context, "capabilities"), "drop")).contains("ALL");
			assertThat(map(context, "capabilities")).doesNotContainKey("add");
		}
		assertThat(list(pod, "volumes")).allSatisfy((volume) -> assertThat(volume).doesNotContainKey("hostPath"));
		Map<String, Object> required = list(map(map(pod, "affinity"), "podAntiAffinity"),
				"requiredDuringSchedulingIgnoredDuringExecution")
			.get(0);
		assertThat(required).containsEntry("topologyKey", "kubernetes.io/hostname");
		assertThat(map(map(required, "labelSelector"), "matchLabels")).isEqualTo(podLabels());

		Map<String, Object> policy = map(manifest("NetworkPolicy/quorumkv"), "spec");
		assertThat(map(map(policy, "podSelector"), "matchLabels")).isEqualTo(podLabels());
		assertThat(stringList(policy, "policyTypes")).containsExactlyInAnyOrder("Ingress", "Egress");
		Map<String, Object> settings = new HashMap<>(settings());
		int api = Integer.parseInt((String) settings.get("server.port"));
		int management = Integer.parseInt((String) settings.get("management.server.port"));
		Map<String, Set<Integer>> portsBySource = new HashMap<>();
		for (Map<String, Object> rule : list(policy, "ingress")) {
			// Every rule names its sources and its ports: none lets anyone in anywhere.
			List<Map<String, Object>> from = list(rule, "from");
			assertThat(from).isNotEmpty();
			Set<Integer> ports = new HashSet<>();
			for (Map<String, Object> port : list(rule, "ports")) {
				ports.add((Integer) port.get("port"));
			}
			for (Map<String, Object> source : from) {
				assertThat(source).doesNotContainKey("ipBlock");
				Object labels = map(map(source, "podSelector"), "matchLabels");
				portsBySource.computeIfAbsent(labels.toString(), (key) -> new HashSet<>()).addAll(ports);
			}
		}
		assertThat(portsBySource).containsOnly(Map.entry(podLabels().toString(), Set.of(api, management)),
				Map.entry(Map.of("quorumkv.io/client", "true").toString(), Set.of(api)),
				Map.entry(Map.of("quorumkv.io/monitoring", "true").toString(), Set.of(management)));
	}

	/**
	 * A scale-down decommissions the pod's node (docs/kubernetes.md, "Scaling down"): the
	 * {@code preStop} hook runs the pre-stop program from the image, with a service
	 * account that may {@code get} this StatefulSet and nothing else, a token projected
	 * where the hook reads it (no default token), an admin key from a Secret, the node's
	 * management port and its CA, and a way out to the Kubernetes API only.
	 */
	@Test
	void aScaleDownDecommissionsThroughAHookThatMayOnlyReadItsStatefulSet() throws Exception {
		Map<String, Object> statefulSet = manifest("StatefulSet/quorumkv");
		Map<String, Object> pod = map(map(map(statefulSet, "spec"), "template"), "spec");
		List<String> preStop = stringList(map(map(map(container(), "lifecycle"), "preStop"), "exec"), "command");
		assertThat(preStop.get(0)).isEqualTo("java");
		assertThat(preStop).anyMatch((option) -> option.startsWith("-Xmx"));
		String app = PreStopHook.workdir(Files.readString(DOCKERFILE));
		assertThat(preStop.subList(preStop.size() - 3, preStop.size())).containsExactly("-cp", app + "/quorumkv.jar",
				PreStopHook.PROGRAM.getName());
		assertThat(PreStopHook.PROGRAM.getMethod("main", String[].class)).isNotNull();

		String account = (String) pod.get("serviceAccountName");
		assertThat(manifest("ServiceAccount/" + account)).containsEntry("automountServiceAccountToken", false);
		assertThat(pod).containsEntry("automountServiceAccountToken", false);
		String name = (String) map(statefulSet, "metadata").get("name");
		assertThat(list(manifest("Role/quorumkv-prestop"), "rules")).singleElement()
			.isEqualTo(Map.of("apiGroups", List.of("apps"), "resources", List.of("statefulsets"), "resourceNames",
					List.of(name), "verbs", List.of("get")));
		Map<String, Object> binding = manifest("RoleBinding/quorumkv-prestop");
		assertThat(map(binding, "roleRef")).containsEntry("kind", "Role").containsEntry("name", "quorumkv-prestop");
		assertThat(list(binding, "subjects")).singleElement()
			.isEqualTo(Map.of("kind", "ServiceAccount", "name", account, "namespace", "quorumkv"));

		// The token, the API server's CA and the namespace, projected where the hook
		// reads them, read-only.
		Map<String, Object> projected = list(pod, "volumes").stream()
			.filter((volume) -> volume.containsKey("projected"))
			.findFirst()
			.map((volume) -> map(volume, "projected"))
			.orElseThrow();
		List<String> paths = new ArrayList<>();
		for (Map<String, Object> source : list(projected, "sources")) {
			if (source.containsKey("serviceAccountToken")) {
				paths.add((String) map(source, "serviceAccountToken").get("path"));
			}
			else {
				Map<String, Object> items = source.containsKey("configMap") ? map(source, "configMap")
						: map(source, "downwardAPI");
				list(items, "items").forEach((item) -> paths.add((String) item.get("path")));
			}
		}
		assertThat(paths).containsExactlyInAnyOrder("token", "ca.crt", "namespace");
		String mounted = volumeMount(list(pod, "volumes").stream()
			.filter((volume) -> volume.containsKey("projected"))
			.map((volume) -> (String) volume.get("name"))
			.findFirst()
			.orElseThrow());
		assertThat(env("QKV_SERVICEACCOUNT")).isEqualTo(mounted);

		// The admin call goes to the node's own management port over its TLS.
		Map<String, String> settings = settings();
		assertThat(env("QKV_NODES")).isEqualTo("https://localhost:" + settings.get("management.server.port"));
		assertThat(env("QKV_CACERT")).isEqualTo(volumeMount("tls") + "/ca.crt");
		Map<String, Object> key = list(container(), "env").stream()
			.filter((variable) -> "QKV_ADMIN_KEY".equals(variable.get("name")))
			.findFirst()
			.orElseThrow();
		assertThat(map(map(key, "valueFrom"), "secretKeyRef")).containsKeys("name", "key");

		// Out of the pod: the nodes, DNS, and the API server's ports, nothing else.
		Set<Integer> ports = new HashSet<>();
		for (Map<String, Object> rule : list(map(manifest("NetworkPolicy/quorumkv"), "spec"), "egress")) {
			for (Map<String, Object> port : list(rule, "ports")) {
				ports.add((Integer) port.get("port"));
			}
		}
		assertThat(ports).containsExactlyInAnyOrder(Integer.valueOf(settings.get("server.port")),
				Integer.valueOf(settings.get("management.server.port")), 53, 443, 6443);
	}

	/** The node's settings in the ConfigMap, flattened to property names. */
	@SuppressWarnings("unchecked")
	static Map<String, String> settings() {
		String yaml = (String) map(manifest("ConfigMap/quorumkv-config"), "data").get("application.yml");
		Map<String, String> flat = new LinkedHashMap<>();
		flatten("", new Yaml().load(yaml), flat);
		return flat;
	}

	@SuppressWarnings("unchecked")
	private static void flatten(String prefix, Object value, Map<String, String> flat) {
		if (value instanceof Map<?, ?> map) {
			map.forEach((key, child) -> flatten(prefix.isEmpty() ? key.toString() : prefix + "." + key, child, flat));
		}
		else if (value instanceof List<?> items) {
			for (int i = 0; i < items.size(); i++) {
				flat.put(prefix + "[" + i + "]", items.get(i).toString());
			}
		}
		else {
			flat.put(prefix, String.valueOf(value));
		}
	}

	/**
	 * A property exists when the metadata names it, or names a map it is an entry of (the
	 * entries of {@code spring.ssl.bundle.pem} are the bundles).
	 */
	private static boolean exists(String name) {
		String plain = name.replaceAll("\\[\\d+\\]$", "");
		if (properties.contains(plain)) {
			return true;
		}
		return mapProperties.stream().anyMatch((map) -> plain.startsWith(map + "."));
	}

	private static String envForm(String property) {
		return property.replace("-", "").replace('.', '_').toUpperCase(Locale.ROOT);
	}

	private static Map<String, Object> manifest(String key) {
		assertThat(byKindAndName).containsKey(key);
		return byKindAndName.get(key);
	}

	private static Map<String, Object> podLabels() {
		return map(map(map(map(manifest("StatefulSet/quorumkv"), "spec"), "template"), "metadata"), "labels");
	}

	private static Map<String, Object> container() {
		Map<String, Object> pod = map(map(map(manifest("StatefulSet/quorumkv"), "spec"), "template"), "spec");
		return list(pod, "containers").get(0);
	}

	private static String env(String name) {
		return list(container(), "env").stream()
			.filter((variable) -> name.equals(variable.get("name")))
			.map((variable) -> (String) variable.get("value"))
			.findFirst()
			.orElseThrow();
	}

	private static String volumeMount(String volume) {
		return list(container(), "volumeMounts").stream()
			.filter((mount) -> volume.equals(mount.get("name")))
			.map((mount) -> (String) mount.get("mountPath"))
			.findFirst()
			.orElseThrow(() -> new AssertionError("no volume mount " + volume));
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> map(Map<String, Object> parent, String key) {
		assertThat(parent).containsKey(key);
		return (Map<String, Object>) parent.get(key);
	}

	@SuppressWarnings("unchecked")
	private static List<Map<String, Object>> list(Map<String, Object> parent, String key) {
		assertThat(parent).containsKey(key);
		return (List<Map<String, Object>>) parent.get(key);
	}

	@SuppressWarnings("unchecked")
	private static List<String> stringList(Map<String, Object> parent, String key) {
		return (List<String>) parent.get(key);
	}

}
