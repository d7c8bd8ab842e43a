package io.quorumkv.service.deploy;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.quorumkv.service.support.FaultFolders;
import io.quorumkv.service.support.KvClient;
import io.quorumkv.service.support.Ledger;
import io.quorumkv.service.support.LedgerCheck;
import io.quorumkv.service.support.NodeProcesses;
import io.quorumkv.service.support.RingWatch;
import io.quorumkv.service.support.StandInKubernetesApi;
import io.quorumkv.service.support.TestKeys;
import io.quorumkv.service.support.Workload;
import io.quorumkv.storage.contract.Seeds;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.yaml.snakeyaml.Yaml;

/**
 * The StatefulSet's {@code preStop} hook on real node processes, with a stand-in for the
 * Kubernetes API: three seeds and a fourth node that joins itself (auto-join, as the
 * StatefulSet's fourth pod does), RF 3 as the manifests', under constant 2/3 load. The
 * hook's command is taken from {@code deploy/kubernetes/statefulset.yaml} and run for the
 * fourth node from the image's extracted layers ({@link ImageLayers}):
 * <ol>
 * <li>the API answers {@code replicas: 4} (a restart): the program drains and exits 0,
 * and the node stays a member, the ring unchanged;</li>
 * <li>the API answers {@code replicas: 3} (a scale-down): the program decommissions the
 * node and exits 0 once it left; the other three agree on the ring without it, and each
 * of them holds every acknowledged write and no acknowledged delete.</li>
 * </ol>
 */
@ExtendWith({ FaultFolders.KeepOnFailure.class, Seeds.class })
class PreStopIT {

	static final int RF = 3;

	static final Duration AWAIT = Duration.ofSeconds(60);

	final KvClient client = new KvClient(Duration.ofSeconds(5));

	final RingWatch rings = new RingWatch(this.client);

	@Test
	@SuppressWarnings("unchecked")
	void aPodScaledAwayIsDecommissionedAndAPodThatRestartsStays(Seeds.Seed given) throws Exception {
		long seed = given.value();
		System.out.println("PreStopIT: " + Seeds.rerun(seed));
		Path root = FaultFolders.create("prestop");
		List<String> hook = hookCommand();
		long begun = System.nanoTime();
		// The image's layers are extracted while the nodes start.
		CompletableFuture<Path> image = CompletableFuture.supplyAsync(() -> {
			try {
				return ImageLayers.app(root.resolve("image"), root.resolve("build.log"));
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		});
		Ledger ledger = new Ledger();
		List<String> live = new CopyOnWriteArrayList<>();
		try (StandInKubernetesApi api = new StandInKubernetesApi("quorumkv", "quorumkv");
				NodeProcesses nodes = new NodeProcesses(root.resolve("nodes"), 4, false,
						Map.of("quorumkv.cluster.replication-factor", Integer.toString(RF),
								"management.endpoints.web.exposure.include", "health,quorumkv",
								"quorumkv.cluster.membership.poll-interval", "200ms",
								"quorumkv.cluster.membership.checkpoint-interval", "300ms",
								// As the ConfigMap has it: a pod beyond the seeds joins
								// itself.
								"quorumkv.cluster.membership.auto-join", "true"),
						List.of("-Xmx256m"))
					.seeds(3)
					.startAll()) {
			for (int i = 0; i < 3; i++) {
				live.add(nodes.url(i));
			}
			Path app = image.join();
			step("three seeds and a newcomer serve, the image's layers extracted", begun);
			Workload load = Workload.rotating(ledger, "prestop", 4, 100, "2/3", () -> live, seed,
					Duration.ofSeconds(5));
			try {
				// The StatefulSet's fourth pod, started with the others, joins itself.
				List<String> four = List.of(nodes.url(0), nodes.url(1), nodes.url(2), nodes.url(3));
				eventually(AWAIT, () -> assertThat(this.rings.ring(nodes.url(0)))
					.contains("\"url\":\"" + nodes.url(3) + "\",\"state\":\"normal\""));
				long joined = this.rings.epoch(nodes.url(0));
				this.rings.awaitSettled(four, joined, AWAIT);
				live.add(nodes.url(3));
				step("the fourth node joined itself", begun);
				ledger.awaitMoreAcked("writes through four nodes", 50, AWAIT);

				// A restart of the fourth pod: the StatefulSet still has four replicas.
				api.replicas(4);
				Path restart = root.resolve("prestop-restart.log");
				long started = System.nanoTime();
				assertThat(runHook(hook, app, api, nodes, root, restart)).as(read(restart)).isZero();
				assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofSeconds(2));
				assertThat(read(restart)).contains("StatefulSet quorumkv has replicas 4: pod quorumkv-3 (ordinal 3)"
						+ " restarts, it is not scaled away; its node stays a member");
				assertThat(this.rings.ring(nodes.url(0))).contains("\"epoch\":" + joined + ",")
					.contains("\"url\":\"" + nodes.url(3) + "\",\"state\":\"normal\"");
				step("the hook at replicas 4: the fourth node stays", begun);

				// The StatefulSet scaled back to three: the fourth pod is going for good.
				api.replicas(3);
				live.remove(nodes.url(3));
				Path scaleDown = root.resolve("prestop-scale-down.log");
				assertThat(runHook(hook, app, api, nodes, root, scaleDown)).as(read(scaleDown)).isZero();
				assertThat(read(scaleDown)).contains("pod quorumkv-3 (ordinal 3) is scaled away; decommissioning")
					.contains(nodes.id(3) + " has left the cluster (removed)");
				List<String> three = List.of(nodes.url(0), nodes.url(1), nodes.url(2));
				this.rings.awaitSettled(three, joined + 3, AWAIT);
				assertThat(this.rings.ring(nodes.url(0)))
					.contains("\"url\":\"" + nodes.url(3) + "\",\"state\":\"removed\"");
				step("the hook at replicas 3: the fourth node left", begun);
				// Then the kubelet's SIGTERM.
				nodes.stop(3);
				ledger.awaitMoreAcked("writes after the scale-down", 50, AWAIT);
			}
			finally {
				load.close();
			}
			System.out.println("PreStopIT: " + ledger + "; answers by status " + ledger.answers());
			assertThat(ledger.putsAcked.get()).isGreaterThan(100);
			LedgerCheck quorum = LedgerCheck.publicRead(ledger, this.client, nodes.url(0), "2/3");
			assertThat(quorum.clean()).as("2/3 reads after the scale-down: %s", quorum).isTrue();
			// RF 3 on three nodes: each holds every key once hints have been delivered.
			for (int i = 0; i < 3; i++) {
				String node = nodes.url(i);
				eventually(AWAIT, () -> {
					LedgerCheck own = LedgerCheck.replicaRead(ledger, this.client, node);
					assertThat(own.clean()).as("%s's own copies: %s", node, own).isTrue();
				});
			}
			step("every acknowledged write read back from the three", begun);
			FaultFolders.deleteUnlessFailed(root);
		}
	}

	private static void step(String what, long begun) {
		System.out
			.println("PreStopIT: " + what + " at " + Duration.ofNanos(System.nanoTime() - begun).toMillis() + " ms");
	}

	/** The StatefulSet's {@code preStop} command. */
	@SuppressWarnings("unchecked")
	private static List<String> hookCommand() throws IOException {
		Map<String, Object> statefulSet = new Yaml()
			.load(Files.readString(ImageLayers.ROOT.resolve("deploy/kubernetes/statefulset.yaml")));
		Map<String, Object> pod = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) statefulSet
			.get("spec")).get("template")).get("spec");
		Map<String, Object> container = ((List<Map<String, Object>>) pod.get("containers")).get(0);
		Map<String, Object> exec = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) container
			.get("lifecycle")).get("preStop")).get("exec");
		return (List<String>) exec.get("command");
	}

	/**
	 * Runs the hook for node 3 as the pod's {@code quorumkv-3}: its command with
	 * {@code /app} this test's extracted layers and {@code java} this JVM, the Kubernetes
	 * API the stand-in, the node's own management port asked; its exit status.
	 */
	private static int runHook(List<String> hook, Path app, StandInKubernetesApi api, NodeProcesses nodes, Path root,
			Path log) throws IOException, InterruptedException {
		List<String> command = new ArrayList<>();
		for (String word : hook) {
			command.add(word.equals("java") ? ImageLayers.java() : word.replace("/app/", app + "/"));
		}
		ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
		Map<String, String> env = builder.environment();
		env.keySet().removeIf((name) -> name.startsWith("KUBERNETES_") || name.startsWith("QKV_"));
		env.put("POD_NAME", "quorumkv-3");
		env.put("QKV_KUBERNETES_API", api.url());
		env.put("QKV_SERVICEACCOUNT", api.writeServiceAccount(root.resolve("serviceaccount")).toString());
		env.put("QUORUMKV_CLUSTER_SELF", nodes.id(3));
		env.put("QKV_NODES", nodes.url(3));
		env.put("QKV_ADMIN_KEY", TestKeys.ADMIN);
		env.put("QKV_PRESTOP_DRAIN", "2s");
		env.put("QKV_PRESTOP_POLL", "200ms");
		env.put("QKV_PRESTOP_LIMIT", "60s");
		Process process = builder.start();
		try {
			assertThat(process.waitFor(90, TimeUnit.SECONDS)).as("the hook ended").isTrue();
			return process.exitValue();
		}
		finally {
			process.destroyForcibly();
		}
	}

	private static String read(Path log) {
		try {
			return Files.readString(log);
		}
		catch (IOException ex) {
			return "";
		}
	}

}
