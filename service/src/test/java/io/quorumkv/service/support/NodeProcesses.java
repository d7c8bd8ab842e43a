package io.quorumkv.service.support;

import java.util.concurrent.TimeUnit;
import java.io.UncheckedIOException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

/**
 * A cluster of real QuorumKV processes ({@code java -jar service/target/quorumkv.jar}) on
 * loopback, each with its own port, data folder and log file, that tests kill with
 * SIGKILL ({@link #kill}), stop gracefully and restart. Optionally every node is reached
 * by its peers through a {@link FaultProxy}: the node's id in
 * {@code quorumkv.cluster.nodes} is then the proxy's URL, so that a test can cut, slow
 * down or blackhole the traffic between nodes while clients talk to the nodes directly.
 * Close it to kill every process and proxy.
 */
public final class NodeProcesses implements AutoCloseable {

	public static final String SECRET = "fault-suite-secret";

	/**
	 * LSM settings for fault tests that kill nodes: 4 KiB memtables (the least the engine
	 * takes), level 0 compacted at two tables into 16 KiB levels of 4 KiB tables, so that
	 * a few hundred small writes flush and compact, and a kill under load lands during a
	 * flush or a compaction (the defaults, 64 MiB memtables, never flush in a test).
	 */
	public static final Map<String, String> SMALL_LSM = Map.of("quorumkv.storage.lsm.memtable-size", "4KB",
			"quorumkv.storage.lsm.level0-compaction-trigger", "2", "quorumkv.storage.lsm.level-base-size", "16KB",
			"quorumkv.storage.lsm.level-size-multiplier", "4", "quorumkv.storage.lsm.target-table-size", "4KB");

	private static final HttpClient HTTP = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(2))
		.build();

	private final Path root;

	private final int[] ports;

	private final FaultProxy @Nullable [] proxies;

	private final @Nullable Process[] processes;

	private final Map<String, String> extra;

	private final List<String> jvmOptions;

	private final Thread cleanup = new Thread(this::killAll, "node-processes-cleanup");

	private final Map<Integer, Map<String, String>> environments = new java.util.concurrent.ConcurrentHashMap<>();

	/** Settings of single nodes, on top of the others; kept for their restarts. */
	private final Map<Integer, Map<String, String>> overrides = new java.util.concurrent.ConcurrentHashMap<>();

	/**
	 * How many of the nodes, the first ones, seed the cluster; the others are newcomers.
	 */
	private volatile int seeds;

	/**
	 * @param root folder for the nodes' data and logs
	 * @param size number of nodes
	 * @param proxied whether peers reach each other through a {@link FaultProxy}
	 * @param extra properties for every node, added after the defaults
	 * @param jvmOptions options of every node's JVM (heap and so on)
	 */
	public NodeProcesses(Path root, int size, boolean proxied, Map<String, String> extra, List<String> jvmOptions) {
		this.root = root;
		this.ports = FreePorts.take(size);
		this.processes = new Process[size];
		this.extra = Map.copyOf(extra);
		this.jvmOptions = List.copyOf(jvmOptions);
		this.seeds = size;
		if (proxied) {
			this.proxies = new FaultProxy[size];
			for (int i = 0; i < size; i++) {
				this.proxies[i] = new FaultProxy(this.ports[i], this::pids);
			}
		}
		else {
			this.proxies = null;
		}
		Runtime.getRuntime().addShutdownHook(this.cleanup);
	}

	/** The repackaged jar the build made in {@code package}. */
	public static Path jar() {
		Path jar = Path.of(System.getProperty("quorumkv.jar", "target/quorumkv.jar"));
		if (!Files.isRegularFile(jar)) {
			throw new IllegalStateException(jar.toAbsolutePath()
					+ " is missing: run the fault suite through `./mvnw verify` (failsafe, after package)");
		}
		return jar;
	}

	/**
	 * Environment variables of a node's process from its next start on (replacing any set
	 * before): {@code LD_PRELOAD} and {@code FAKETIME} of libfaketime, say.
	 */
	public void environment(int node, Map<String, String> variables) {
		this.environments.put(node, Map.copyOf(variables));
	}

	/** Starts every node and waits until all serve. */
	public NodeProcesses startAll() {
		for (int i = 0; i < size(); i++) {
			launch(i);
		}
		for (int i = 0; i < size(); i++) {
			awaitReady(i, Duration.ofSeconds(90));
		}
		return this;
	}

	/**
	 * Makes only the first {@code count} nodes the cluster's seeds
	 * ({@code quorumkv.cluster.nodes}); the others start as newcomers that wait to be
	 * joined.
	 */
	public NodeProcesses seeds(int count) {
		this.seeds = count;
		return this;
	}

	/** Starts the first {@code count} nodes and waits until all serve. */
	public NodeProcesses startFirst(int count) {
		for (int i = 0; i < count; i++) {
			launch(i);
		}
		for (int i = 0; i < count; i++) {
			awaitReady(i, Duration.ofSeconds(90));
		}
		return this;
	}

	/** Starts one node and waits until it serves. */
	public void start(int node) {
		launch(node);
		awaitReady(node, Duration.ofSeconds(90));
	}

	/** Starts one node with some settings of its own, and waits until it serves. */
	public void start(int node, Map<String, String> overrides) {
		this.overrides.put(node, Map.copyOf(overrides));
		start(node);
	}

	/** Deletes a stopped node's data folder: the node is gone for good. */
	public void deleteData(int node) {
		if (this.processes[node] != null) {
			throw new IllegalStateException("node " + node + " is running");
		}
		FaultFolders.delete(dataFolder(node));
	}

	/** Whether the node's process runs. */
	public boolean running(int node) {
		Process process = this.processes[node];
		return process != null && process.isAlive();
	}

	private void launch(int node) {
		if (this.processes[node] != null && this.processes[node].isAlive()) {
			throw new IllegalStateException("node " + node + " is running");
		}
		Map<String, String> properties = new LinkedHashMap<>();
		properties.put("server.port", Integer.toString(this.ports[node]));
		properties.put("quorumkv.cluster.nodes", nodesProperty());
		properties.put("quorumkv.cluster.self", id(node));
		properties.put("quorumkv.cluster.secret", SECRET);
		properties.put("quorumkv.storage.path", dataFolder(node).toString());
		properties.put("quorumkv.cluster.replica-timeout", "1s");
		properties.put("quorumkv.cluster.connect-timeout", "250ms");
		properties.put("quorumkv.cluster.hints.delivery-interval", "200ms");
		properties.put("quorumkv.cluster.hints.max-backoff", "1s");
		properties.put("quorumkv.cluster.breaker.wait-in-open", "1s");
		properties.put("spring.lifecycle.timeout-per-shutdown-phase", "5s");
		// The test API keys: membership and repair operations need the admin one.
		properties.putAll(TestKeys.properties());
		properties.putAll(this.extra);
		properties.putAll(this.overrides.getOrDefault(node, Map.of()));
		List<String> command = new ArrayList<>();
		command.add(ProcessHandle.current().info().command().orElse("java"));
		command.add("-XX:TieredStopAtLevel=1");
		command.add("-XX:+UseSerialGC");
		command.add("-Xshare:auto");
		// Its temporary files (lz4-java's native library, unpacked at every start and
		// removed only at a clean exit) go with the test's folder, not into /tmp: the
		// tests SIGKILL nodes.
		command.add("-Djava.io.tmpdir=" + tmpFolder(node));
		command.addAll(this.jvmOptions);
		command.add("-jar");
		command.add(jar().toAbsolutePath().toString());
		properties.forEach((name, value) -> command.add("--" + name + "=" + value));
		try {
			Files.createDirectories(tmpFolder(node));
			ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
				.redirectOutput(ProcessBuilder.Redirect.appendTo(log(node).toFile()));
			builder.environment().putAll(this.environments.getOrDefault(node, Map.of()));
			this.processes[node] = builder.start();
		}
		catch (IOException ex) {
			throw new IllegalStateException("cannot start node " + node, ex);
		}
	}

	/** Waits until {@code GET /v0/status} answers 200. */
	public void awaitReady(int node, Duration limit) {
		long deadline = System.nanoTime() + limit.toNanos();
		while (System.nanoTime() < deadline) {
			Process process = this.processes[node];
			if (process == null || !process.isAlive()) {
				throw new IllegalStateException("node " + node + " exited; see " + log(node));
			}
			try {
				HttpResponse<Void> response = HTTP.send(HttpRequest.newBuilder(URI.create(url(node) + "/v0/status"))
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
				throw new IllegalStateException(ex);
			}
			sleep(100);
		}
		throw new IllegalStateException("node " + node + " not ready within " + limit + "; see " + log(node));
	}

	/** SIGKILL: the process dies at once, nothing is flushed or closed. */
	public void kill(int node) {
		Process process = this.processes[node];
		if (process != null) {
			process.destroyForcibly();
			waitFor(process, node);
			this.processes[node] = null;
		}
	}

	/**
	 * SIGSTOP ({@code pause}) or SIGCONT ({@code resume}): a paused process keeps its
	 * connections open and answers nothing, as a node in a long GC pause or a stalled VM.
	 */
	public void signal(int node, boolean pause) {
		Process process = this.processes[node];
		if (process == null) {
			throw new IllegalStateException("node " + node + " is not running");
		}
		try {
			Process kill = new ProcessBuilder("kill", pause ? "-STOP" : "-CONT", Long.toString(process.pid()))
				.redirectErrorStream(true)
				.start();
			if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
				throw new IllegalStateException("kill " + (pause ? "-STOP" : "-CONT") + " of node " + node + " failed");
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** SIGTERM: graceful shutdown (drains requests, closes storage). */
	public void stop(int node) {
		Process process = this.processes[node];
		if (process != null) {
			process.destroy();
			waitFor(process, node);
			this.processes[node] = null;
		}
	}

	private void waitFor(Process process, int node) {
		try {
			if (!process.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
				process.destroyForcibly();
				process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("interrupted while stopping node " + node, ex);
		}
	}

	public int size() {
		return this.ports.length;
	}

	/** The node's public URL (clients talk to the node directly). */
	public String url(int node) {
		return "http://127.0.0.1:" + this.ports[node];
	}

	/** The node's id in the cluster: its proxy's URL when proxied. */
	public String id(int node) {
		return (this.proxies != null) ? "http://127.0.0.1:" + this.proxies[node].port() : url(node);
	}

	public int port(int node) {
		return this.ports[node];
	}

	/** The proxy in front of a node (peers reach the node through it). */
	public FaultProxy proxy(int node) {
		if (this.proxies == null) {
			throw new IllegalStateException("not a proxied cluster");
		}
		return this.proxies[node];
	}

	public long pid(int node) {
		Process process = this.processes[node];
		if (process == null) {
			throw new IllegalStateException("node " + node + " is not running");
		}
		return process.pid();
	}

	public Path dataFolder(int node) {
		return this.root.resolve("node" + node);
	}

	/** The SSTables in a node's LSM data folder now. */
	public long tables(int node) {
		try (var files = Files.list(dataFolder(node).resolve("data"))) {
			return files.filter((file) -> file.getFileName().toString().endsWith(".sst")).count();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	public Path log(int node) {
		return this.root.resolve("node" + node + ".log");
	}

	/** The node's {@code java.io.tmpdir}. */
	private Path tmpFolder(int node) {
		return this.root.resolve("tmp" + node);
	}

	public String logText(int node) {
		try {
			return Files.readString(log(node), java.nio.charset.StandardCharsets.ISO_8859_1);
		}
		catch (IOException ex) {
			return "";
		}
	}

	/** Node index by process id, for the proxies; -1 when not a node. */
	private int pids(long pid) {
		for (int i = 0; i < this.processes.length; i++) {
			Process process = this.processes[i];
			if (process != null && process.pid() == pid) {
				return i;
			}
		}
		return -1;
	}

	/** The pids of the running nodes. */
	public List<Long> runningPids() {
		List<Long> pids = new ArrayList<>();
		for (Process process : this.processes) {
			if (process != null && process.isAlive()) {
				pids.add(process.pid());
			}
		}
		return pids;
	}

	private String nodesProperty() {
		List<String> ids = new ArrayList<>();
		for (int i = 0; i < this.seeds; i++) {
			ids.add(id(i));
		}
		return ids.stream().collect(Collectors.joining(","));
	}

	private void killAll() {
		for (Process process : this.processes) {
			if (process != null) {
				process.destroyForcibly();
			}
		}
		if (this.proxies != null) {
			for (FaultProxy proxy : this.proxies) {
				proxy.close();
			}
		}
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	@Override
	public void close() {
		for (int i = 0; i < this.processes.length; i++) {
			kill(i);
		}
		killAll();
		try {
			Runtime.getRuntime().removeShutdownHook(this.cleanup);
		}
		catch (IllegalStateException ex) {
			// shutting down already
		}
	}

}
