package io.quorumkv.service.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import io.quorumkv.service.peer.StreamFrames;
import io.quorumkv.storage.Entry;
import io.quorumkv.service.QuorumKvApplication;
import io.quorumkv.service.peer.InternalApi;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Hooks;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.http.HttpHeaders;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Real QuorumKV nodes in this JVM, each a full application context on its own loopback
 * port and data folder, that tests stop and restart. Close it to stop every node.
 */
public final class TestCluster implements AutoCloseable {

	public static final String SECRET = "test-cluster-secret";

	private final Path root;

	private final int[] ports;

	private final ConfigurableApplicationContext[] nodes;

	private final Map<String, String> extra;

	private final Clock[] clocks;

	private final Map<Integer, Map<String, String>> nodeExtra = new HashMap<>();

	private final Map<Integer, List<Consumer<GenericApplicationContext>>> nodeBeans = new HashMap<>();

	private final @Nullable TestTls tls;

	/** Built once per node: a TLS client's context and connections are not cheap. */
	private final WebTestClient[] clients;

	private final WebTestClient[] internalClients;

	public TestCluster(Path root, int size, Map<String, String> extraProperties) {
		this(root, size, extraProperties, null);
	}

	/**
	 * @param tls TLS of every node (public and internal API, calls to peers), or null for
	 * plain HTTP; with mutual TLS the nodes have no cluster secret
	 */
	public TestCluster(Path root, int size, Map<String, String> extraProperties, @Nullable TestTls tls) {
		this.root = root;
		this.ports = FreePorts.take(size);
		this.nodes = new ConfigurableApplicationContext[size];
		this.extra = Map.copyOf(extraProperties);
		this.tls = tls;
		this.clients = new WebTestClient[size];
		this.internalClients = new WebTestClient[size];
		this.clocks = new Clock[size];
	}

	/**
	 * Gives a node a wall clock of its own (its {@link Clock} bean) from its next start
	 * on: skewed, or moved by the test.
	 */
	public TestCluster withClock(int node, Clock clock) {
		this.clocks[node] = clock;
		return this;
	}

	/** Properties of one node only, from its next start on (over the cluster's). */
	public TestCluster withProperties(int node, Map<String, String> properties) {
		this.nodeExtra.put(node, Map.copyOf(properties));
		return this;
	}

	/**
	 * Gives a node a bean of its own from its next start on; {@code bean} is called once
	 * per start (a fault-injecting file layer under its storage, say).
	 */
	public <T> TestCluster withBean(int node, Class<T> type, Supplier<T> bean) {
		this.nodeBeans.computeIfAbsent(node, (n) -> new ArrayList<>())
			.add((context) -> context.registerBean(type, bean));
		return this;
	}

	/**
	 * Gives every node started from now on {@code clock} as its {@code Clock} bean (its
	 * hybrid logical clock and its storage read it), so that a test can move time.
	 */
	public TestCluster withClock(Clock clock) {
		Arrays.fill(this.clocks, clock);
		return this;
	}

	public TestCluster startAll() {
		for (int i = 0; i < this.nodes.length; i++) {
			start(i);
		}
		return this;
	}

	public void start(int node) {
		start(node, Map.of());
	}

	/** Starts a node with some settings of its own on top of the cluster's. */
	public void start(int node, Map<String, String> overrides) {
		if (this.nodes[node] != null) {
			throw new IllegalStateException("node " + node + " is running");
		}
		Map<String, Object> properties = new HashMap<>();
		properties.put("server.port", this.ports[node]);
		properties.put("quorumkv.cluster.nodes", nodesProperty());
		properties.put("quorumkv.cluster.self", url(node));
		if (this.tls == null || !this.tls.mutual()) {
			properties.put("quorumkv.cluster.secret", SECRET);
		}
		if (this.tls != null) {
			properties.putAll(this.tls.properties());
		}
		properties.put("quorumkv.cluster.replica-timeout", "3s");
		properties.put("quorumkv.cluster.connect-timeout", "250ms");
		properties.put("quorumkv.cluster.hints.delivery-interval", "200ms");
		properties.put("quorumkv.cluster.hints.max-backoff", "1s");
		properties.put("quorumkv.cluster.breaker.wait-in-open", "1s");
		properties.put("quorumkv.storage.path", this.root.resolve("node" + node).toString());
		properties.put("spring.lifecycle.timeout-per-shutdown-phase", "5s");
		// The test API keys: membership and repair operations need the admin one.
		properties.putAll(TestKeys.properties());
		properties.putAll(this.extra);
		properties.putAll(this.nodeExtra.getOrDefault(node, Map.of()));
		properties.putAll(overrides);
		// As command-line arguments: they take precedence over application.yml.
		String[] args = properties.entrySet()
			.stream()
			.map((property) -> "--" + property.getKey() + "=" + property.getValue())
			.toArray(String[]::new);
		// Each node gets event loops of its own: stopping one must not dispose the
		// JVM-wide
		// Reactor Netty resources the others serve on.
		Clock clock = this.clocks[node];
		this.nodes[node] = new SpringApplicationBuilder(QuorumKvApplication.class).initializers((context) -> {
			((GenericApplicationContext) context).registerBean(ReactorResourceFactory.class, () -> {
				ReactorResourceFactory factory = new ReactorResourceFactory();
				factory.setUseGlobalResources(false);
				factory.setShutdownQuietPeriod(Duration.ZERO);
				return factory;
			});
			if (clock != null) {
				((GenericApplicationContext) context).registerBean(Clock.class, () -> clock);
			}
			this.nodeBeans.getOrDefault(node, List.of())
				.forEach((bean) -> bean.accept((GenericApplicationContext) context));
		}).run(args);
	}

	/**
	 * Stops the node, and fails if stopping it dropped an error that nothing handled
	 * (Reactor logs those as errors: a connection closed after its event loop, say).
	 */
	public void stop(int node) {
		ConfigurableApplicationContext context = this.nodes[node];
		if (context != null) {
			List<Throwable> dropped = new CopyOnWriteArrayList<>();
			Hooks.onErrorDropped(dropped::add);
			try {
				context.close();
			}
			finally {
				Hooks.resetOnErrorDropped();
				this.nodes[node] = null;
			}
			assertThat(dropped).as("errors dropped while node %d stopped: %s", node, stackTraces(dropped)).isEmpty();
		}
	}

	/**
	 * Stops a node whose disk is already gone (a power cut under it): closes its context
	 * without the check of {@link #stop}, since its storage's failures are then expected.
	 */
	public void halt(int node) {
		ConfigurableApplicationContext context = this.nodes[node];
		this.nodes[node] = null;
		if (context != null) {
			context.close();
		}
	}

	public int size() {
		return this.nodes.length;
	}

	/** Whether the node is running (started, and not stopped since). */
	public boolean running(int node) {
		return this.nodes[node] != null;
	}

	private static String stackTraces(List<Throwable> errors) {
		java.io.StringWriter out = new java.io.StringWriter();
		for (Throwable error : errors) {
			error.printStackTrace(new java.io.PrintWriter(out, true));
		}
		return out.toString();
	}

	public String url(int node) {
		return ((this.tls != null) ? "https" : "http") + "://127.0.0.1:" + this.ports[node];
	}

	public int port(int node) {
		return this.ports[node];
	}

	public <T> T bean(int node, Class<T> type) {
		ConfigurableApplicationContext context = this.nodes[node];
		if (context == null) {
			throw new IllegalStateException("node " + node + " is stopped");
		}
		return context.getBean(type);
	}

	/** Sends {@code request}, checks its status, and returns its body as text. */
	public static String body(WebTestClient.RequestHeadersSpec<?> request, int status) {
		return request.exchange()
			.expectStatus()
			.isEqualTo(status)
			.expectBody(String.class)
			.returnResult()
			.getResponseBody();
	}

	/** A client of one node's public API. */
	public WebTestClient client(int node) {
		if (this.clients[node] == null) {
			this.clients[node] = TestClients.forUrl(url(node), (this.tls != null) ? this.tls.anonymousClient() : null);
		}
		return this.clients[node];
	}

	/**
	 * Writes {@code key-<i>} = {@code value-<i>} for every i below {@code count}, key i
	 * through {@code nodes[i % nodes.length]}, each answered 201.
	 */
	public void putKeys(int count, int... nodes) {
		for (int i = 0; i < count; i++) {
			client(nodes[i % nodes.length]).put()
				.uri("/v0/entity?id=key-" + i)
				.bodyValue(("value-" + i).getBytes(StandardCharsets.UTF_8))
				.exchange()
				.expectStatus()
				.isCreated();
		}
	}

	/**
	 * Reads back what {@link #putKeys} wrote, key i through
	 * {@code nodes[i % nodes.length]}.
	 */
	public void expectKeys(int count, int... nodes) {
		for (int i = 0; i < count; i++) {
			client(nodes[i % nodes.length]).get()
				.uri("/v0/entity?id=key-" + i)
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody(String.class)
				.isEqualTo("value-" + i);
		}
	}

	/** A client of one node's admin operations, with the test admin key. */
	public WebTestClient adminClient(int node) {
		return client(node).mutate().defaultHeader(HttpHeaders.AUTHORIZATION, TestKeys.bearer(TestKeys.ADMIN)).build();
	}

	/** The status of the node's {@code /actuator/health/readiness} (200 or 503). */
	public int readiness(int node) {
		return adminClient(node).get()
			.uri("/actuator/health/readiness")
			.exchange()
			.returnResult(Void.class)
			.getStatus()
			.value();
	}

	/**
	 * A client of one node's internal API that proves it is a node: with the cluster
	 * secret, or with mutual TLS the nodes' certificate.
	 */
	public WebTestClient internalClient(int node) {
		if (this.internalClients[node] == null) {
			this.internalClients[node] = (this.tls != null && this.tls.mutual())
					? TestClients.forUrl(url(node), this.tls.nodeClient())
					: client(node).mutate().defaultHeader(InternalApi.SECRET, SECRET).build();
		}
		return this.internalClients[node];
	}

	/** A URI on one node, exactly as written (no further encoding). */
	public URI uri(int node, String pathAndQuery) {
		return URI.create(url(node) + pathAndQuery);
	}

	/**
	 * What one node's own storage holds for a key, through its replica stream: the value,
	 * {@code "<tombstone>"}, or null when absent.
	 */
	public @Nullable String localValue(int node, String key) {
		Entry entry = localEntry(node, key);
		if (entry == null) {
			return null;
		}
		byte[] value = entry.value();
		return (value == null) ? "<tombstone>" : new String(value);
	}

	/** The expiry one node's own storage holds for a key, or null when it has none. */
	public @Nullable Long localExpiry(int node, String key) {
		Entry entry = localEntry(node, key);
		return (entry != null && entry.expires()) ? entry.expiresAt() : null;
	}

	/** The timestamp one node's own storage holds for a key, or null. */
	public @Nullable Long localTimestamp(int node, String key) {
		Entry entry = localEntry(node, key);
		return (entry != null) ? entry.timestamp() : null;
	}

	/**
	 * A replica write on one node's stream, as a coordinator sends it; fails unless the
	 * node keeps it (or keeps a greater entry).
	 */
	public void replicaPut(int node, Entry entry) {
		byte[] body = internalClient(node).post()
			.uri(uri(node, StreamCalls.PATH))
			.bodyValue(StreamCalls.upsert(entry))
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(byte[].class)
			.returnResult()
			.getResponseBody();
		StreamFrames.Result result = StreamCalls.result(body);
		if (result.type() != StreamFrames.KEPT) {
			throw new IllegalStateException("node " + node + " answered the replica write with " + result);
		}
	}

	/** One node's own entry of a key (a replica get on its stream), or null. */
	public @Nullable Entry localEntry(int node, String key) {
		byte[] body = internalClient(node).post()
			.uri(uri(node, StreamCalls.PATH))
			.bodyValue(StreamCalls.get(key.getBytes()))
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(byte[].class)
			.returnResult()
			.getResponseBody();
		return StreamCalls.entry(body);
	}

	private String nodesProperty() {
		List<String> urls = new ArrayList<>();
		for (int i = 0; i < this.ports.length; i++) {
			urls.add(url(i));
		}
		return urls.stream().collect(Collectors.joining(","));
	}

	@Override
	public void close() {
		for (int i = 0; i < this.nodes.length; i++) {
			stop(i);
		}
	}

}
