package io.quorumkv.client;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
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

import javax.net.ssl.SSLContext;

import org.jspecify.annotations.Nullable;

/**
 * Real QuorumKV nodes for the client's tests:
 * {@code java -jar service/target/quorumkv.jar} processes on free loopback ports, each
 * with a data folder under the module's {@code target/tmp} (the build sets
 * {@code quorumkv.jar}). Closing kills them all and deletes their folders.
 */
public final class TestNodes implements AutoCloseable {

	private static final HttpClient PROBE = HttpClient.newBuilder()
		.connectTimeout(Duration.ofSeconds(1))
		.version(HttpClient.Version.HTTP_1_1)
		.build();

	private final Path root;

	private final int[] ports;

	private final Process[] processes;

	private final Thread cleanup = new Thread(this::killAll, "test-nodes-cleanup");

	private final String scheme;

	private final HttpClient probe;

	private TestNodes(int size, Map<String, String> properties, @Nullable SSLContext tls) throws IOException {
		this.scheme = (tls != null) ? "https" : "http";
		this.probe = (tls != null) ? HttpClient.newBuilder()
			.connectTimeout(Duration.ofSeconds(1))
			.version(HttpClient.Version.HTTP_1_1)
			.sslContext(tls)
			.build() : PROBE;
		this.root = Files.createTempDirectory("client-nodes");
		this.ports = freePorts(size);
		this.processes = new Process[size];
		Runtime.getRuntime().addShutdownHook(this.cleanup);
		try {
			for (int i = 0; i < size; i++) {
				this.processes[i] = launch(i, properties);
			}
			for (int i = 0; i < size; i++) {
				awaitReady(i, Duration.ofSeconds(120));
			}
		}
		catch (RuntimeException | IOException ex) {
			close();
			throw ex;
		}
	}

	/** Starts {@code size} nodes forming one cluster, with extra node properties. */
	public static TestNodes start(int size, Map<String, String> properties) throws IOException {
		return new TestNodes(size, properties, null);
	}

	/**
	 * Starts {@code size} nodes serving TLS ({@code properties} name their SSL bundle);
	 * {@code tls} trusts their certificates, for the readiness probe.
	 */
	public static TestNodes startTls(int size, Map<String, String> properties, SSLContext tls) throws IOException {
		return new TestNodes(size, properties, tls);
	}

	/** The folder of the nodes' data and logs (and of any file a test gives them). */
	public Path root() {
		return this.root;
	}

	public URI url(int node) {
		return URI.create(this.scheme + "://127.0.0.1:" + this.ports[node]);
	}

	public List<URI> urls() {
		List<URI> urls = new ArrayList<>();
		for (int i = 0; i < this.ports.length; i++) {
			urls.add(url(i));
		}
		return urls;
	}

	/** SIGKILL of one node. */
	public void kill(int node) throws InterruptedException {
		this.processes[node].destroyForcibly();
		this.processes[node].waitFor(30, TimeUnit.SECONDS);
	}

	/** A loopback port that nothing listens on (taken, then closed). */
	public static URI deadUrl() {
		return URI.create("http://127.0.0.1:" + freePorts(1)[0]);
	}

	private Process launch(int node, Map<String, String> properties) throws IOException {
		Path jar = Path.of(System.getProperty("quorumkv.jar", "../service/target/quorumkv.jar"));
		if (!Files.isRegularFile(jar)) {
			throw new IllegalStateException(jar.toAbsolutePath() + " is missing: build the service first "
					+ "(./mvnw verify builds it before the client)");
		}
		// A killed node's temporary files (lz4's native library) go with the nodes'
		// folder.
		Path tmp = Files.createDirectories(this.root.resolve("tmp" + node));
		List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
				"-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto",
				"-Dreactor.netty.ioWorkerCount=1", "-Djava.io.tmpdir=" + tmp, "-jar", jar.toAbsolutePath().toString()));
		command.add("--server.port=" + this.ports[node]);
		command.add("--quorumkv.storage.path=" + this.root.resolve("node" + node + "/data"));
		command.add("--quorumkv.cluster.nodes=" + String.join(",", urls().stream().map(URI::toString).toList()));
		command.add("--quorumkv.cluster.self=" + url(node));
		command.add("--quorumkv.cluster.secret=client-test-secret");
		command.add("--quorumkv.cluster.replica-timeout=1s");
		command.add("--spring.lifecycle.timeout-per-shutdown-phase=2s");
		properties.forEach((name, value) -> command.add("--" + name + "=" + value));
		return new ProcessBuilder(command).redirectErrorStream(true)
			.redirectOutput(this.root.resolve("node" + node + ".log").toFile())
			.start();
	}

	private void awaitReady(int node, Duration limit) throws IOException {
		long deadline = System.nanoTime() + limit.toNanos();
		while (System.nanoTime() < deadline) {
			if (!this.processes[node].isAlive()) {
				throw new IllegalStateException("node " + node + " exited:\n" + tail(node));
			}
			try {
				HttpResponse<Void> response = this.probe
					.send(HttpRequest.newBuilder(URI.create(url(node) + "/v0/status"))
						.timeout(Duration.ofSeconds(2))
						.build(), HttpResponse.BodyHandlers.discarding());
				if (response.statusCode() == 200) {
					return;
				}
			}
			catch (IOException ex) {
				// not listening yet
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IOException(ex);
			}
			try {
				Thread.sleep(100);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IOException(ex);
			}
		}
		throw new IllegalStateException("node " + node + " not ready within " + limit + ":\n" + tail(node));
	}

	private String tail(int node) throws IOException {
		List<String> lines = Files.readAllLines(this.root.resolve("node" + node + ".log"));
		return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
	}

	private static int[] freePorts(int count) {
		List<ServerSocket> sockets = new ArrayList<>();
		try {
			int[] ports = new int[count];
			for (int i = 0; i < count; i++) {
				ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
				sockets.add(socket);
				ports[i] = socket.getLocalPort();
			}
			return ports;
		}
		catch (IOException ex) {
			throw new IllegalStateException("no free port", ex);
		}
		finally {
			for (ServerSocket socket : sockets) {
				try {
					socket.close();
				}
				catch (IOException ignored) {
					// best effort
				}
			}
		}
	}

	private void killAll() {
		for (Process process : this.processes) {
			if (process != null) {
				process.destroyForcibly();
			}
		}
	}

	@Override
	public void close() throws IOException {
		killAll();
		for (Process process : this.processes) {
			if (process != null) {
				try {
					process.waitFor(30, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
		}
		try {
			Runtime.getRuntime().removeShutdownHook(this.cleanup);
		}
		catch (IllegalStateException ex) {
			// the JVM is shutting down already
		}
		try (var paths = Files.walk(this.root)) {
			paths.sorted(java.util.Comparator.reverseOrder()).forEach((path) -> path.toFile().delete());
		}
	}

}
