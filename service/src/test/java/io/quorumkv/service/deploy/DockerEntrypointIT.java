package io.quorumkv.service.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.quorumkv.service.support.FreePorts;
import io.quorumkv.service.support.NodeProcesses;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.json.JsonMapper;

/**
 * The container image without a container: does what the {@code Dockerfile} does (its
 * {@code extract} command, its layer copies in order, its environment), then runs its
 * exact {@code ENTRYPOINT} against the result, and checks that the node starts, serves
 * the API on its port and Actuator on the management port, and stops gracefully on
 * SIGTERM, with the application's classes from the AOT cache of the Dockerfile's training
 * run. Static checks: a non-root user, the data folder a volume.
 */
class DockerEntrypointIT {

	private static final String API_KEY = "docker-entrypoint-it-key";

	/** SHA-256 of {@link #API_KEY}, in hexadecimal, as a node is given a key. */
	private static final String API_KEY_SHA256 = "4c4120beb585c272746f32062a0d0a6fbf99579150590e9918077835ee54df86";

	static final Path ROOT = ImageLayers.ROOT;

	private static final HttpClient HTTP = HttpClient.newBuilder()
		.connectTimeout(Duration.ofSeconds(2))
		.version(HttpClient.Version.HTTP_1_1)
		.build();

	@TempDir
	Path work;

	@Test
	void theImagesEntryPointStartsANodeFromTheExtractedLayers() throws Exception {
		String dockerfile = Files.readString(ROOT.resolve("Dockerfile"));
		assertThat(dockerfile).containsPattern("(?m)^USER 10001:10001$").containsPattern("(?m)^VOLUME /data$");

		// The build stage (the jar extracted by the Dockerfile's own command) and the
		// layers copied into /app in the Dockerfile's order.
		Path app = ImageLayers.app(this.work, this.work.resolve("build.log"));
		Files.copy(ROOT.resolve(single(dockerfile, "(?m)^COPY (deploy/docker/entrypoint\\.sh) \\./entrypoint\\.sh$")),
				app.resolve("entrypoint.sh"));
		// The AOT cache's training run, as the Dockerfile has it (its training folder
		// moved into this test's folder).
		String training = single(dockerfile, "(?ms)^RUN (java -XX:AOTCacheOutput=.*?)\\s*\\\\\n \\&\\& rm")
			.replaceAll("\\\\\n", " ")
			.replace("/tmp/aot-training", this.work.resolve("aot-training").toString());
		List<String> train = words(training);
		train.set(0, java());
		assertThat(run(new ProcessBuilder(train).directory(app.toFile()))).isZero();
		assertThat(app.resolve("quorumkv.aot")).isNotEmptyFile();
		// It served its workload through the front door, every answer the expected one.
		assertThat(Files.readString(this.work.resolve("build.log")))
			.contains("AOT training run: {DELETE 202=2000, GET 200=2002, GET 404=4000, PUT 201=2000}");

		// ENTRYPOINT exactly, /app being this folder; the image's environment, ports
		// free.
		List<String> entryPoint = new ArrayList<>();
		for (Object word : JsonMapper.builder()
			.build()
			.readValue(single(dockerfile, "(?m)^ENTRYPOINT (\\[.*\\])$"), List.class)) {
			entryPoint.add(word.toString().replace("/app/", app + "/"));
		}
		int[] ports = FreePorts.take(2);
		String javaOpts = single(dockerfile, "JAVA_OPTS=\"([^\"]*)\"");
		ProcessBuilder node = new ProcessBuilder(entryPoint).redirectErrorStream(true)
			.redirectOutput(this.work.resolve("node.log").toFile());
		Map<String, String> env = node.environment();
		env.put("PATH", Path.of(java()).getParent() + ":" + env.getOrDefault("PATH", "/usr/bin:/bin"));
		env.put("QUORUMKV_STORAGE_PATH", this.work.resolve("data").toString());
		env.put("SERVER_PORT", Integer.toString(ports[0]));
		env.put("MANAGEMENT_SERVER_PORT", Integer.toString(ports[1]));
		env.put("JAVA_OPTS", javaOpts + " -Dreactor.netty.ioWorkerCount=1 -Xlog:class+load=info");
		// The image's own settings of who may connect: every interface, clients
		// authenticated; an API key given as a user of the image gives it.
		for (String name : List.of("SERVER_ADDRESS", "MANAGEMENT_SERVER_ADDRESS", "QUORUMKV_SECURITY_PUBLIC_API")) {
			env.put(name, single(dockerfile, "(?m)^\\s+(?:ENV )?" + name + "=(\\S+)"));
		}
		env.put("QUORUMKV_SECURITY_APIKEYS_APP_SHA256", API_KEY_SHA256);
		env.put("QUORUMKV_SECURITY_APIKEYS_APP_ACCESS", "read-write");
		Process process = node.start();
		try {
			awaitStatus(process, "http://127.0.0.1:" + ports[0] + "/v0/status");
			String api = "http://127.0.0.1:" + ports[0];
			assertThat(send(HttpRequest.newBuilder(URI.create(api + "/v0/entity?id=image"))
				.PUT(HttpRequest.BodyPublishers.ofString("layered"))).statusCode()).isEqualTo(401);
			assertThat(send(HttpRequest.newBuilder(URI.create(api + "/v0/entity?id=image"))
				.header("Authorization", "Bearer " + API_KEY)
				.PUT(HttpRequest.BodyPublishers.ofString("layered"))).statusCode()).isEqualTo(201);
			HttpResponse<String> read = send(HttpRequest.newBuilder(URI.create(api + "/v0/entity?id=image"))
				.header("Authorization", "Bearer " + API_KEY));
			assertThat(read.body()).isEqualTo("layered");
			assertThat(Files.readString(this.work.resolve("node.log")))
				.contains("Public API on 0.0.0.0 port " + ports[0] + " over plain HTTP: clients authenticate, but their"
						+ " API keys cross the network in plain text");
			// The management server starts a moment after the API's: wait for it too.
			awaitStatus(process, "http://127.0.0.1:" + ports[1] + "/actuator/health/readiness");
			assertThat(send(HttpRequest.newBuilder(URI.create(api + "/actuator/health"))
				.header("Authorization", "Bearer " + API_KEY)).statusCode()).isEqualTo(404);
			assertThat(this.work.resolve("data").resolve("data")).isDirectory();
			// The JVM took the application's classes from the AOT cache.
			assertThat(Files.readString(this.work.resolve("node.log")))
				.contains("io.quorumkv.service.QuorumKvApplication source: shared objects file")
				// and the classes of serving a request too: the training run served some.
				.contains("reactor.netty.http.server.HttpServerOperations source: shared objects file");
			// SIGTERM, as the container runtime sends it: exec made the JVM the process.
			process.destroy();
			assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
			assertThat(Files.readString(this.work.resolve("node.log"))).contains("Graceful shutdown complete");
		}
		finally {
			process.destroyForcibly();
		}
	}

	private static String java() {
		return ImageLayers.java();
	}

	private static String single(String text, String regex) {
		return ImageLayers.single(text, regex);
	}

	private static List<String> words(String command) {
		return ImageLayers.words(command);
	}

	private int run(ProcessBuilder builder) throws IOException, InterruptedException {
		return ImageLayers.run(builder, this.work.resolve("build.log"));
	}

	private void awaitStatus(Process process, String url) throws Exception {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
		while (System.nanoTime() < deadline) {
			assertThat(process.isAlive()).as("node exited: %s", Files.readString(this.work.resolve("node.log")))
				.isTrue();
			try {
				if (send(HttpRequest.newBuilder(URI.create(url))).statusCode() == 200) {
					return;
				}
			}
			catch (IOException ex) {
				// not listening yet
			}
			Thread.sleep(200);
		}
		throw new AssertionError("not ready: " + Files.readString(this.work.resolve("node.log")));
	}

	private static HttpResponse<String> send(HttpRequest.Builder request) throws IOException, InterruptedException {
		return HTTP.send(request.timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
	}

}
