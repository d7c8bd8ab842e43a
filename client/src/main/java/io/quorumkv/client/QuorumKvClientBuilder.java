package io.quorumkv.client;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * Builds a {@link QuorumKvClient}. Only the seeds are required; every other setting has a
 * default fit for a client beside a cluster on the same network.
 *
 * <pre>{@code
 * QuorumKvClient client = QuorumKvClient.builder()
 *     .seeds("http://10.0.0.1:8080", "http://10.0.0.2:8080", "http://10.0.0.3:8080")
 *     .connectTimeout(Duration.ofMillis(500))
 *     .responseTimeout(Duration.ofSeconds(2))
 *     .maxConnectionsPerNode(64)
 *     .retryPolicy(RetryPolicy.DEFAULT.withMaxAttempts(2))
 *     .build();
 * }</pre>
 *
 * A builder is not thread-safe; the client it builds is.
 */
public final class QuorumKvClientBuilder {

	private final List<URI> seeds = new ArrayList<>();

	private Duration connectTimeout = Duration.ofSeconds(1);

	private Duration responseTimeout = Duration.ofSeconds(5);

	private int maxConnectionsPerNode = 32;

	private int pendingAcquireMaxCount = 1024;

	private Duration maxIdleTime = Duration.ofSeconds(30);

	private int ioThreads = Math.min(4, Runtime.getRuntime().availableProcessors());

	private int maxValueSize = 4 * 1024 * 1024;

	private Duration nodeDownTime = Duration.ofSeconds(2);

	private RetryPolicy retryPolicy = RetryPolicy.DEFAULT;

	private @Nullable Router router;

	private Routing routing = Routing.REPLICA_AWARE;

	private Duration ringRefreshInterval = Duration.ofSeconds(10);

	private Credentials credentials = Credentials.none();

	private @Nullable TlsSettings tls;

	QuorumKvClientBuilder() {
	}

	/**
	 * The nodes the client talks to, as {@code http://host:port} (or {@code https://}
	 * with {@link #tls}). Any node serves any key; give several so that one down is not
	 * an outage. Replaces earlier seeds.
	 * @throws IllegalArgumentException naming the seed when one is not such a URL; a seed
	 * without a scheme ({@code 127.0.0.1:8081}) is refused, not read as {@code http://}:
	 * the scheme says whether the connection is encrypted, and a guess of {@code http}
	 * would send a credential in clear text to a cluster that expects TLS
	 */
	public QuorumKvClientBuilder seeds(String... seeds) {
		List<URI> uris = new ArrayList<>(seeds.length);
		for (String seed : seeds) {
			uris.add(seed(Objects.requireNonNull(seed, "seed")));
		}
		return seeds(uris);
	}

	/** One seed as a URL, its trailing slash dropped. */
	static URI seed(String seed) {
		String trimmed = seed.strip();
		if (trimmed.endsWith("/")) {
			trimmed = trimmed.substring(0, trimmed.length() - 1);
		}
		if (!trimmed.contains("://")) {
			throw new IllegalArgumentException("seed '" + seed + "' has no scheme: " + ClientConfig.SEED_FORM);
		}
		try {
			return new URI(trimmed);
		}
		catch (URISyntaxException ex) {
			throw new IllegalArgumentException(
					"seed '" + seed + "' is not a URL (" + ex.getReason() + "): " + ClientConfig.SEED_FORM, ex);
		}
	}

	/** The nodes the client talks to; see {@link #seeds(String...)}. */
	public QuorumKvClientBuilder seeds(List<URI> seeds) {
		this.seeds.clear();
		this.seeds.addAll(Objects.requireNonNull(seeds, "seeds"));
		return this;
	}

	/** How long a TCP connection (and TLS handshake) may take; default 1 s. */
	public QuorumKvClientBuilder connectTimeout(Duration connectTimeout) {
		this.connectTimeout = Objects.requireNonNull(connectTimeout, "connectTimeout");
		return this;
	}

	/**
	 * How long the client waits for an answer once its request is sent, per attempt;
	 * default 5 s. Keep it above the nodes' {@code quorumkv.cluster.replica-timeout}, so
	 * a slow quorum is answered 504 by the node rather than cut by the client.
	 */
	public QuorumKvClientBuilder responseTimeout(Duration responseTimeout) {
		this.responseTimeout = Objects.requireNonNull(responseTimeout, "responseTimeout");
		return this;
	}

	/**
	 * Keep-alive connections per node (the pool is per node); default 32. A request
	 * beyond it waits for a connection.
	 */
	public QuorumKvClientBuilder maxConnectionsPerNode(int maxConnectionsPerNode) {
		this.maxConnectionsPerNode = maxConnectionsPerNode;
		return this;
	}

	/**
	 * Requests that may wait for a connection of one node's pool; default 1024. Beyond it
	 * a request fails at once with {@link NodeUnavailableException} instead of queueing
	 * without bound.
	 */
	public QuorumKvClientBuilder pendingAcquireMaxCount(int pendingAcquireMaxCount) {
		this.pendingAcquireMaxCount = pendingAcquireMaxCount;
		return this;
	}

	/**
	 * An idle connection is closed after this long; default 30 s, below the nodes'
	 * {@code quorumkv.http.idle-timeout} (60 s) so that the client, not the node, closes
	 * it: a write is never sent on a connection the node is closing.
	 */
	public QuorumKvClientBuilder maxIdleTime(Duration maxIdleTime) {
		this.maxIdleTime = Objects.requireNonNull(maxIdleTime, "maxIdleTime");
		return this;
	}

	/** Event-loop threads of the client's own Netty loops; default min(4, cores). */
	public QuorumKvClientBuilder ioThreads(int ioThreads) {
		this.ioThreads = ioThreads;
		return this;
	}

	/**
	 * The largest value the client reads back, default 4 MiB: set it to the nodes'
	 * {@code quorumkv.http.max-body-size} when that is larger (a scan buffers one record
	 * whole, and a record larger than this fails the scan).
	 */
	public QuorumKvClientBuilder maxValueSize(int maxValueSize) {
		this.maxValueSize = maxValueSize;
		return this;
	}

	/**
	 * How long a node whose connection failed is tried only after the others; default 2
	 * s.
	 */
	public QuorumKvClientBuilder nodeDownTime(Duration nodeDownTime) {
		this.nodeDownTime = Objects.requireNonNull(nodeDownTime, "nodeDownTime");
		return this;
	}

	/** When requests are retried; default {@link RetryPolicy#DEFAULT}. */
	public QuorumKvClientBuilder retryPolicy(RetryPolicy retryPolicy) {
		this.retryPolicy = Objects.requireNonNull(retryPolicy, "retryPolicy");
		return this;
	}

	/**
	 * Where a request with a key goes; default {@link Routing#REPLICA_AWARE}: to a
	 * replica of its key, which saves the hop from the node the client calls to the
	 * replica. {@link Routing#ANY_NODE} sends each request to the seeds in turn, as
	 * before; the node forwards it to the key's replicas. A {@link #router(Router)}, when
	 * given, decides alone.
	 */
	public QuorumKvClientBuilder routing(Routing routing) {
		this.routing = Objects.requireNonNull(routing, "routing");
		return this;
	}

	/**
	 * How often the client reads the ring again once it has one; default 10 s. Sooner (at
	 * most once a second) when a node answers 503 or refuses a connection.
	 */
	QuorumKvClientBuilder ringRefreshInterval(Duration ringRefreshInterval) {
		this.ringRefreshInterval = Objects.requireNonNull(ringRefreshInterval, "ringRefreshInterval");
		return this;
	}

	/**
	 * Which nodes a request goes to: a router of one's own, which replaces
	 * {@link #routing(Routing)} (the client then reads no ring). Default: the built-in
	 * routing; {@link Router#roundRobin()} is what it does without a ring.
	 */
	public QuorumKvClientBuilder router(Router router) {
		this.router = Objects.requireNonNull(router, "router");
		return this;
	}

	/** What the client sends to authenticate; default {@link Credentials#none()}. */
	public QuorumKvClientBuilder credentials(Credentials credentials) {
		this.credentials = Objects.requireNonNull(credentials, "credentials");
		return this;
	}

	/** TLS for {@code https://} seeds (trust, client certificate). */
	public QuorumKvClientBuilder tls(TlsSettings tls) {
		this.tls = Objects.requireNonNull(tls, "tls");
		return this;
	}

	/**
	 * Validates the settings and starts the client (its event loops and connection pool).
	 * @throws IllegalArgumentException when a setting is out of range
	 */
	public QuorumKvClient build() {
		return new QuorumKvClient(new ClientConfig(this.seeds, this.connectTimeout, this.responseTimeout,
				this.maxConnectionsPerNode, this.pendingAcquireMaxCount, this.maxIdleTime, this.ioThreads,
				this.maxValueSize, this.nodeDownTime, this.retryPolicy, this.router, this.routing,
				this.ringRefreshInterval, this.credentials, this.tls));
	}

	/** Where the client sends a request with a key ({@link #routing(Routing)}). */
	public enum Routing {

		/**
		 * To a replica of the key, computed from the ring the client reads from the nodes
		 * ({@code GET /v0/ring}) and follows; to any node while it has none, or when the
		 * key's replicas are down.
		 */
		REPLICA_AWARE,
		/** To the seeds in turn; the node forwards to the key's replicas. */
		ANY_NODE

	}

}
