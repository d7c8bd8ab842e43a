package io.quorumkv.service.prestop;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.quorumkv.service.support.StandInKubernetesApi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The pre-stop program's decision against a stand-in Kubernetes API server (TLS, the
 * projected token's folder) and a stand-in node management port: a pod whose ordinal is
 * at or above {@code spec.replicas} has its node decommissioned and waits until it left;
 * any other pod, and every way of not knowing the scale (403, unreachable, not JSON, no
 * replicas, an API certificate of another CA, no ordinal), drains only, with a line that
 * says why.
 */
class PreStopTest {

	static final String SELF = "https://quorumkv-3.quorumkv.quorumkv.svc.cluster.local:8080";

	static final String ADMIN_KEY = "pre-stop-test-admin-key";

	@TempDir
	Path work;

	StandInKubernetesApi api;

	StandInNode node;

	final ByteArrayOutputStream output = new ByteArrayOutputStream();

	PreStopLog log;

	@BeforeEach
	void start() throws IOException {
		this.api = new StandInKubernetesApi("quorumkv", "quorumkv");
		this.node = new StandInNode();
		this.log = new PreStopLog(new PrintStream(this.output, true, StandardCharsets.UTF_8), null);
	}

	@AfterEach
	void stop() {
		this.api.close();
		this.node.close();
	}

	@Test
	void aPodScaledAwayHasItsNodeDecommissionedAndWaitsUntilItLeft() {
		this.api.replicas(3);
		assertThat(PreStop.run(env("quorumkv-3"), this.log)).isEqualTo(PreStop.Outcome.DECOMMISSIONED);
		assertThat(this.api.requests()).containsExactly("GET /apis/apps/v1/namespaces/quorumkv/statefulsets/quorumkv");
		assertThat(this.node.decommissions).containsExactly("{\"url\":\"" + SELF + "\"}");
		assertThat(this.node.keys).containsOnly("Bearer " + ADMIN_KEY);
		// It waited for the state removed, through leaving.
		assertThat(this.node.ringReads.get()).isGreaterThanOrEqualTo(StandInNode.LEAVING_READS + 1);
		assertThat(this.log.lines())
			.anyMatch((line) -> line
				.contains("has replicas 3: pod quorumkv-3 (ordinal 3)" + " is scaled away; decommissioning " + SELF))
			.anyMatch((line) -> line.contains(SELF + " has left the cluster (removed)"));
		assertThat(this.output.toString(StandardCharsets.UTF_8)).contains("quorumkv pre-stop: ");
	}

	@Test
	void aPodThatRestartsKeepsItsNode() {
		this.api.replicas(3);
		assertThat(PreStop.run(env("quorumkv-2"), this.log)).isEqualTo(PreStop.Outcome.STAYED);
		assertThat(this.api.requests()).hasSize(1);
		assertThat(this.node.decommissions).isEmpty();
		assertThat(this.log.lines()).singleElement()
			.asString()
			.contains("StatefulSet quorumkv has replicas 3: pod quorumkv-2 (ordinal 2) restarts, it is not scaled"
					+ " away; its node stays a member; draining");
	}

	@Test
	void aDecommissionUnderWayIsWaitedForWhenTheNodeRefusesASecondOne() {
		this.api.replicas(3);
		this.node.refuseWith = 409;
		this.node.state = "leaving";
		assertThat(PreStop.run(env("quorumkv-3"), this.log)).isEqualTo(PreStop.Outcome.DECOMMISSIONED);
		assertThat(this.log.lines()).anyMatch((line) -> line.contains(SELF + " is leaving already"));
	}

	@Test
	void aRefusedAdminKeyIsNotAskedAgain() {
		this.api.replicas(3);
		this.node.refuseWith = 403;
		assertThat(PreStop.run(env("quorumkv-3"), this.log)).isEqualTo(PreStop.Outcome.UNFINISHED);
		assertThat(this.node.decommissions).hasSize(1);
		assertThat(this.log.lines()).anyMatch(
				(line) -> line.contains("refused the admin key (HTTP 403") && line.contains("NOT decommissioning"));
	}

	@Test
	void aDecommissionThatDoesNotEndInTheBoundSaysSo() {
		this.api.replicas(3);
		this.node.neverRemoved = true;
		Map<String, String> env = env("quorumkv-3");
		env.put("QKV_PRESTOP_LIMIT", "600ms");
		assertThat(PreStop.run(env, this.log)).isEqualTo(PreStop.Outcome.UNFINISHED);
		assertThat(this.log.lines()).last()
			.asString()
			.contains("has not ended within the bound")
			.contains("state leaving");
	}

	@Test
	void refusedByTheApiServerItDoesNotDecommission() {
		this.api.answer(403, "{\"kind\":\"Status\",\"reason\":\"Forbidden\",\"message\":\"statefulsets.apps"
				+ " \\\"quorumkv\\\" is forbidden\"}");
		assertUndecided(env("quorumkv-3"), "answered 403: {\"kind\":\"Status\",\"reason\":\"Forbidden\"");
		assertThat(this.api.requests()).hasSize(1);
	}

	@Test
	void anUnreachableApiServerIsTriedThreeTimesAndItDoesNotDecommission() throws IOException {
		Map<String, String> env = env("quorumkv-3");
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			env.put("QKV_KUBERNETES_API", "https://127.0.0.1:" + socket.getLocalPort());
		}
		assertUndecided(env, "failed: java.net.ConnectException");
		assertThat(this.output.toString(StandardCharsets.UTF_8).lines().filter((line) -> line.contains("trying again")))
			.hasSize(2);
	}

	@Test
	void anAnswerThatIsNotAStatefulSetMeansItDoesNotDecommission() {
		this.api.answer(200, "<html>proxy error</html>");
		assertUndecided(env("quorumkv-3"), "answered what is not JSON: <html>proxy error</html>");
		this.api.answer(200, "{\"kind\":\"StatefulSet\",\"spec\":{}}");
		assertUndecided(env("quorumkv-3"), "answered no spec.replicas");
		this.api.answer(200, "{\"spec\":{\"replicas\":\"three\"}}");
		assertUndecided(env("quorumkv-3"), "answered no spec.replicas");
	}

	@Test
	void anApiServerOfAnotherCaIsNotTrusted() {
		this.api.replicas(3);
		Map<String, String> env = env("quorumkv-3");
		try (StandInKubernetesApi other = new StandInKubernetesApi("quorumkv", "quorumkv")) {
			other.writeServiceAccount(this.work.resolve("other-ca"));
			env.put("QKV_SERVICEACCOUNT", this.work.resolve("other-ca").toString());
			assertUndecided(env, "SSLHandshakeException");
		}
	}

	@Test
	void aPodNameWithoutAnOrdinalDoesNotDecommission() {
		this.api.replicas(0);
		assertUndecided(env("quorumkv"), "pod quorumkv has no ordinal");
		assertThat(this.api.requests()).isEmpty();
	}

	@Test
	void noAddressOfTheApiServerDoesNotDecommission() {
		Map<String, String> env = env("quorumkv-3");
		env.remove("QKV_KUBERNETES_API");
		assertUndecided(env, "no address of the Kubernetes API");
	}

	@ParameterizedTest
	@CsvSource({ "0, 3, 2, false", "0, 3, 3, true", "0, 0, 0, true", "1, 3, 0, true", "1, 3, 3, false",
			"1, 3, 4, true" })
	void aPodIsScaledAwayWhenItsOrdinalIsOutsideTheStatefulSets(int start, int replicas, int ordinal, boolean away) {
		assertThat(new StatefulSetScale.Known(start, replicas).scalesAway(ordinal)).isEqualTo(away);
		assertThat(StatefulSetScale.parse(URI.create("https://api"),
				"{\"spec\":{\"replicas\":" + replicas + ",\"ordinals\":{\"start\":" + start + "}}}"))
			.isEqualTo(new StatefulSetScale.Known(start, replicas));
	}

	@Test
	void settingsComeFromThePodsEnvironment() {
		PreStopSettings settings = PreStopSettings.from(Map.of("HOSTNAME", "kv-store-12", "KUBERNETES_SERVICE_HOST",
				"fd00::1", "KUBERNETES_SERVICE_PORT", "6443", "QKV_PRESTOP_LIMIT", "29m"));
		assertThat(settings.ordinal()).isEqualTo(12);
		assertThat(settings.statefulSet()).isEqualTo("kv-store");
		assertThat(settings.kubernetesApi()).isEqualTo(URI.create("https://[fd00::1]:6443"));
		assertThat(settings.serviceAccount()).isEqualTo(Path.of(PreStopSettings.DEFAULT_SERVICEACCOUNT));
		assertThat(settings.nodes()).containsExactly(URI.create(PreStopSettings.DEFAULT_NODES));
		assertThat(settings.limit()).hasMinutes(29);
		assertThat(settings.drain()).hasSeconds(5);
		assertThat(PreStopSettings.ordinal("quorumkv-x")).isNull();
		assertThat(PreStopSettings.ordinal("-3")).isNull();
	}

	private void assertUndecided(Map<String, String> env, String reason) {
		PreStopLog fresh = new PreStopLog(new PrintStream(this.output, true, StandardCharsets.UTF_8), null);
		assertThat(PreStop.run(env, fresh)).isEqualTo(PreStop.Outcome.UNDECIDED);
		assertThat(this.node.decommissions).isEmpty();
		assertThat(fresh.lines()).last().asString().contains(reason).contains("NOT decommissioning");
	}

	private Map<String, String> env(String pod) {
		Map<String, String> env = new HashMap<>();
		env.put("POD_NAME", pod);
		env.put("QKV_KUBERNETES_API", this.api.url());
		env.put("QKV_SERVICEACCOUNT", this.api.writeServiceAccount(this.work.resolve("serviceaccount")).toString());
		env.put("QUORUMKV_CLUSTER_SELF", SELF);
		env.put("QKV_NODES", this.node.url());
		env.put("QKV_ADMIN_KEY", ADMIN_KEY);
		env.put("QKV_PRESTOP_DRAIN", "0ms");
		env.put("QKV_PRESTOP_POLL", "20ms");
		env.put("QKV_PRESTOP_LIMIT", "20s");
		return env;
	}

	/**
	 * A node's management port: agrees to a decommission (or refuses it with
	 * {@link #refuseWith}) and shows this node leaving for a few reads of its ring, then
	 * removed.
	 */
	static final class StandInNode implements AutoCloseable {

		static final int LEAVING_READS = 3;

		final HttpServer server;

		final ExecutorService executor = Executors.newSingleThreadExecutor();

		final List<String> decommissions = new CopyOnWriteArrayList<>();

		final List<String> keys = new CopyOnWriteArrayList<>();

		final AtomicInteger ringReads = new AtomicInteger();

		volatile int refuseWith;

		volatile String state = "normal";

		volatile boolean neverRemoved;

		StandInNode() throws IOException {
			this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
			this.server.setExecutor(this.executor);
			this.server.createContext("/actuator/quorumkv", this::handle);
			this.server.start();
		}

		String url() {
			return "http://127.0.0.1:" + this.server.getAddress().getPort();
		}

		private void handle(HttpExchange exchange) throws IOException {
			try (exchange) {
				this.keys.add(exchange.getRequestHeaders().getFirst("Authorization"));
				String path = exchange.getRequestURI().getPath();
				int code = 200;
				String reply;
				if (exchange.getRequestMethod().equals("POST") && path.equals("/actuator/quorumkv/decommission")) {
					this.decommissions
						.add(new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
					if (this.refuseWith != 0) {
						code = this.refuseWith;
						reply = "{\"refused\":\"a change is under way\"}";
					}
					else {
						this.state = "leaving";
						reply = "{\"change\":\"c1\",\"kind\":\"decommission\",\"epoch\":5}";
					}
				}
				else if (exchange.getRequestMethod().equals("GET") && path.equals("/actuator/quorumkv")) {
					if ("leaving".equals(this.state) && this.ringReads.incrementAndGet() > LEAVING_READS
							&& !this.neverRemoved) {
						this.state = "removed";
					}
					reply = "{\"ring\":{\"epoch\":5,\"nodes\":[{\"id\":\"https://quorumkv-0\",\"url\":\"https://quorumkv-0\","
							+ "\"state\":\"normal\"},{\"id\":\"node-1\",\"url\":\"" + SELF + "/\",\"state\":\""
							+ this.state + "\"}]}}";
				}
				else {
					code = 404;
					reply = "{}";
				}
				byte[] bytes = reply.getBytes(StandardCharsets.UTF_8);
				exchange.sendResponseHeaders(code, bytes.length);
				exchange.getResponseBody().write(bytes);
			}
		}

		@Override
		public void close() {
			this.server.stop(0);
			this.executor.shutdownNow();
		}

	}

}
