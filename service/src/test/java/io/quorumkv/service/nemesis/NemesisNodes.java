package io.quorumkv.service.nemesis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.quorumkv.service.support.FreePorts;
import io.quorumkv.service.support.NodeProcesses;
import io.quorumkv.service.support.RequiredTool;
import io.quorumkv.service.support.TestKeys;
import org.jspecify.annotations.Nullable;

/**
 * Real QuorumKV processes for the nemesis, each in its {@link Network} place, that it
 * kills (SIGKILL), pauses (SIGSTOP/SIGCONT), restarts, restarts from an older copy of
 * their data folder, whose clocks it skews (libfaketime, preloaded in every node: each
 * node reads its offset from a file of its own, re-read at most once a second, so a skew
 * or a jump needs no restart; only {@code CLOCK_REALTIME} is faked, never the monotonic
 * clock that the JIT, the GC and timeouts use) and whose disks it fills (each data folder
 * a tmpfs of its own, when mounting is permitted). The first {@code seeds} nodes seed the
 * cluster; the others are spares that wait to be joined, and a node a decommission took
 * out is retired (stopped for good). Close it to kill every process and remove what it
 * made.
 */
final class NemesisNodes implements AutoCloseable {

	static final Path FAKETIME = Path.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1");

	private static final HttpClient HTTP = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(2))
		.build();

	/**
	 * @param size number of nodes
	 * @param properties node properties added after the defaults
	 * @param jvmOptions every node's JVM options
	 * @param loaderPath a jar put on every node's class path (Spring Boot's
	 * PropertiesLauncher {@code loader.path}), or null
	 * @param namespaces whether to try network namespaces (else the proxy)
	 * @param tmpfs whether to give each node a tmpfs data folder (for full disks)
	 * @param seeds how many of the nodes, the first ones, seed the cluster; the others
	 * are spares, started as newcomers that wait to be joined
	 */
	record Options(int size, Map<String, String> properties, List<String> jvmOptions, @Nullable Path loaderPath,
			boolean namespaces, boolean tmpfs, int seeds) {

		/** Every node a seed. */
		Options(int size, Map<String, String> properties, List<String> jvmOptions, @Nullable Path loaderPath,
				boolean namespaces, boolean tmpfs) {
			this(size, properties, jvmOptions, loaderPath, namespaces, tmpfs, size);
		}

	}

	private final Path root;

	private final Options options;

	private final int[] ports;

	private final Network network;

	private final @Nullable Process[] processes;

	private final boolean fakeClock;

	private final NodeFolders folders;

	/** The nodes of the ring, those clients send to: the seeds, then as changes go. */
	private final List<Integer> members = new CopyOnWriteArrayList<>();

	/** Nodes started at least once (and so restarted when healed) unless retired. */
	private final boolean[] launched;

	/** Nodes a decommission took out: stopped, never restarted (unless respawned). */
	private final boolean[] retired;

	/** Seeds wiped and started again as newcomers ({@link #respawn}). */
	private final boolean[] newcomer;

	private final Thread cleanup = new Thread(this::killAll, "nemesis-nodes-cleanup");

	NemesisNodes(Path root, Options options, Random random) {
		this.root = root;
		this.options = options;
		this.processes = new Process[options.size()];
		this.launched = new boolean[options.size()];
		this.retired = new boolean[options.size()];
		this.newcomer = new boolean[options.size()];
		for (int node = 0; node < options.seeds(); node++) {
			this.members.add(node);
		}
		Network chosen = null;
		int[] ports = new int[options.size()];
		// -Dquorumkv.nemesis.network=proxy runs the fallback where namespaces would work.
		if (options.namespaces() && !"proxy".equals(System.getProperty("quorumkv.nemesis.network"))) {
			int port = 8080;
			java.util.Arrays.fill(ports, port);
			chosen = NamespaceNetwork.create(options.size(), port, random).orElse(null);
			RequiredTool.orFallBack(chosen != null,
					"network namespaces (root, iproute2's ip netns; the reason is printed above): the proxy fallback");
		}
		if (chosen == null) {
			ports = FreePorts.take(options.size());
			chosen = new ProxyNetwork(ports, this::nodeOfPid);
		}
		this.ports = ports;
		this.network = chosen;
		this.fakeClock = RequiredTool.orFallBack(Files.isRegularFile(FAKETIME),
				"libfaketime at " + FAKETIME + " (apt-get install libfaketime): clock faults");
		System.out.println("Nemesis network: " + this.network.describe());
		System.out.println("Nemesis clocks: " + (this.fakeClock
				? "libfaketime preloaded (" + FAKETIME + "), CLOCK_REALTIME offset per node, monotonic clock not faked"
				: "no libfaketime (apt-get install libfaketime): clock faults disabled"));
		try {
			Files.createDirectories(root);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		for (int node = 0; node < options.size(); node++) {
			setClockOffset(node, 0);
		}
		this.folders = new NodeFolders(root, options.size(), options.tmpfs());
		Runtime.getRuntime().addShutdownHook(this.cleanup);
	}

	Options options() {
		return this.options;
	}

	Network network() {
		return this.network;
	}

	int size() {
		return this.options.size();
	}

	boolean canSkewClocks() {
		return this.fakeClock;
	}

	boolean canFillDisks() {
		return this.folders.canFill();
	}

	/** The nodes of the ring now, in order: the ones clients send to. */
	List<Integer> members() {
		return List.copyOf(this.members);
	}

	/** A node joined the ring (clients send to it from now on). */
	void admit(int node) {
		if (!this.members.contains(node)) {
			this.members.add(node);
			this.members.sort(null);
		}
	}

	/** A node left the ring: no client sends to it, it is stopped and stays so. */
	void retire(int node) {
		this.members.remove(Integer.valueOf(node));
		this.retired[node] = true;
		kill(node);
	}

	/**
	 * A retired node comes back as a new spare: its data folder wiped (a new node id), it
	 * starts as a newcomer (its own URL left out of its seed list) and waits to be
	 * joined.
	 */
	void respawn(int node) {
		if (!this.retired[node]) {
			throw new IllegalStateException("node " + node + " is not retired");
		}
		kill(node);
		this.folders.wipe(node);
		this.retired[node] = false;
		this.newcomer[node] = true;
		start(node);
	}

	/** A node running that is not a member: the spare, or -1. */
	int spare() {
		for (int node = 0; node < size(); node++) {
			if (wanted(node) && !this.members.contains(node)) {
				return node;
			}
		}
		return -1;
	}

	/** Whether the node should be running once every fault is healed. */
	boolean wanted(int node) {
		return this.launched[node] && !this.retired[node];
	}

	String url(int node) {
		return "http://" + this.network.host(node) + ":" + this.ports[node];
	}

	/** The URL the node's peers know it by: the one a join names. */
	String peerUrl(int node) {
		return this.network.peerUrl(node, this.ports[node]);
	}

	NemesisNodes startAll() {
		for (int node = 0; node < size(); node++) {
			launch(node);
		}
		for (int node = 0; node < size(); node++) {
			awaitReady(node, Duration.ofSeconds(120));
		}
		return this;
	}

	void start(int node) {
		launch(node);
		awaitReady(node, Duration.ofSeconds(120));
	}

	boolean running(int node) {
		Process process = this.processes[node];
		return process != null && process.isAlive();
	}

	/** SIGKILL. */
	void kill(int node) {
		Process process = this.processes[node];
		if (process != null) {
			Sh.run("kill", "-CONT", Long.toString(process.pid()));
			process.destroyForcibly();
			try {
				process.waitFor(30, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			this.processes[node] = null;
		}
	}

	/** SIGSTOP: the process stops at once, its connections stay open. */
	void pause(int node) {
		signal(node, "-STOP");
	}

	/** SIGCONT. */
	void resume(int node) {
		signal(node, "-CONT");
	}

	private void signal(int node, String signal) {
		Process process = this.processes[node];
		if (process != null) {
			Sh.must("kill", signal, Long.toString(process.pid()));
		}
	}

	/** Sets a node's clock offset (libfaketime reads it within a second). */
	void setClockOffset(int node, long millis) {
		String offset = ((millis >= 0) ? "+" : "-") + (Math.abs(millis) / 1000) + "."
				+ String.format("%03d", Math.abs(millis) % 1000);
		try {
			Path file = clockFile(node);
			Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
			Files.writeString(tmp, offset + "\n");
			Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** Copies a stopped node's data folder aside. */
	void snapshot(int node) {
		requireStopped(node);
		this.folders.snapshot(node);
	}

	boolean hasSnapshot(int node) {
		return this.folders.hasSnapshot(node);
	}

	/** Replaces a stopped node's data folder with its older copy. */
	void restoreSnapshot(int node) {
		requireStopped(node);
		this.folders.restoreSnapshot(node);
	}

	/** Fills the node's disk until no space is left. */
	long fillDisk(int node) {
		return this.folders.fill(node);
	}

	void freeDisk(int node) {
		this.folders.free(node);
	}

	String logText(int node) {
		try {
			return Files.readString(log(node), java.nio.charset.StandardCharsets.ISO_8859_1);
		}
		catch (IOException ex) {
			return "";
		}
	}

	Path log(int node) {
		return this.root.resolve("node" + node + ".log");
	}

	private Path clockFile(int node) {
		return this.root.resolve("clock" + node);
	}

	private void requireStopped(int node) {
		if (running(node)) {
			throw new IllegalStateException("node " + node + " is running");
		}
	}

	private void launch(int node) {
		if (running(node)) {
			throw new IllegalStateException("node " + node + " is running");
		}
		if (this.retired[node]) {
			throw new IllegalStateException("node " + node + " was decommissioned");
		}
		this.launched[node] = true;
		Map<String, String> properties = new LinkedHashMap<>();
		properties.put("server.address", this.network.host(node));
		properties.put("server.port", Integer.toString(this.ports[node]));
		List<String> seeds = new ArrayList<>();
		for (int i = 0; i < this.options.seeds(); i++) {
			if (i != node || !this.newcomer[node]) {
				seeds.add(this.network.peerUrl(i, this.ports[i]));
			}
		}
		// A spare's own URL is not among the seeds: it starts as a newcomer.
		properties.put("quorumkv.cluster.nodes", String.join(",", seeds));
		properties.put("quorumkv.cluster.self", this.network.peerUrl(node, this.ports[node]));
		properties.put("quorumkv.cluster.secret", NodeProcesses.SECRET);
		properties.put("quorumkv.storage.path", this.folders.data(node).toString());
		properties.put("quorumkv.cluster.replica-timeout", "1s");
		properties.put("quorumkv.cluster.connect-timeout", "250ms");
		properties.put("quorumkv.cluster.hints.delivery-interval", "200ms");
		properties.put("quorumkv.cluster.hints.max-backoff", "1s");
		properties.put("quorumkv.cluster.breaker.wait-in-open", "1s");
		properties.put("spring.lifecycle.timeout-per-shutdown-phase", "5s");
		// The Operator's joins, decommissions and repairs need the admin API and its key.
		properties.put("management.endpoints.web.exposure.include", "health,metrics,quorumkv");
		properties.putAll(TestKeys.properties());
		properties.putAll(this.options.properties());
		List<String> command = new ArrayList<>(this.network.commandPrefix(node));
		command.add(ProcessHandle.current().info().command().orElse("java"));
		command.add("-XX:TieredStopAtLevel=1");
		command.add("-XX:+UseSerialGC");
		command.add("-Xshare:auto");
		// Its temporary files (lz4-java's native library, removed only at a clean exit)
		// go with the run's folder, not into /tmp: the nemesis SIGKILLs nodes.
		Path tmp = this.root.resolve("tmp" + node);
		try {
			Files.createDirectories(tmp);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		command.add("-Djava.io.tmpdir=" + tmp);
		command.addAll(this.options.jvmOptions());
		String jar = NodeProcesses.jar().toAbsolutePath().toString();
		if (this.options.loaderPath() != null) {
			command.add("-Dloader.path=" + this.options.loaderPath().toAbsolutePath());
			command.add("-cp");
			command.add(jar);
			command.add("org.springframework.boot.loader.launch.PropertiesLauncher");
		}
		else {
			command.add("-jar");
			command.add(jar);
		}
		properties.forEach((name, value) -> command.add("--" + name + "=" + value));
		ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
			.redirectOutput(ProcessBuilder.Redirect.appendTo(log(node).toFile()));
		if (this.fakeClock) {
			builder.environment().put("LD_PRELOAD", FAKETIME.toString());
			builder.environment().put("FAKETIME_TIMESTAMP_FILE", clockFile(node).toString());
			builder.environment().put("FAKETIME_CACHE_DURATION", "1");
			builder.environment().put("FAKETIME_DONT_FAKE_MONOTONIC", "1");
			// libfaketime turns its "monotonic fix" on for this glibc, and its
			// pthread_cond_timedwait then breaks the JVM's timed waits: a node took
			// minutes
			// to start instead of 17 s. Off, with the monotonic clock not faked at all.
			builder.environment().put("FAKETIME_FORCE_MONOTONIC_FIX", "0");
		}
		try {
			this.processes[node] = builder.start();
		}
		catch (IOException ex) {
			throw new IllegalStateException("cannot start node " + node, ex);
		}
	}

	void awaitReady(int node, Duration limit) {
		long deadline = System.nanoTime() + limit.toNanos();
		while (System.nanoTime() < deadline) {
			if (!running(node)) {
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
			Pause.millis(200);
		}
		throw new IllegalStateException("node " + node + " not ready within " + limit + "; see " + log(node));
	}

	private int nodeOfPid(long pid) {
		for (int i = 0; i < this.processes.length; i++) {
			Process process = this.processes[i];
			if (process != null && process.pid() == pid) {
				return i;
			}
		}
		return -1;
	}

	private void killAll() {
		for (Process process : this.processes) {
			if (process != null) {
				Sh.run("kill", "-CONT", Long.toString(process.pid()));
				process.destroyForcibly();
			}
		}
		this.folders.close();
		this.network.close();
	}

	@Override
	public void close() {
		for (int node = 0; node < size(); node++) {
			kill(node);
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
