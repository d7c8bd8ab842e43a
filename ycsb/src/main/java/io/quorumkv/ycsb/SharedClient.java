package io.quorumkv.ycsb;

import java.time.Duration;
import java.util.Arrays;
import java.util.Properties;

import io.quorumkv.client.QuorumKvClient;
import io.quorumkv.client.QuorumKvClientBuilder;
import io.quorumkv.client.RetryPolicy;
import org.jspecify.annotations.Nullable;

/**
 * The one {@link QuorumKvClient} of a YCSB run. YCSB makes a {@code DB} per client
 * thread; they all share this client (one connection pool per node, as an application
 * would), which the first {@code init} builds and the last {@code cleanup} closes.
 */
final class SharedClient {

	private static final Object LOCK = new Object();

	private static @Nullable QuorumKvClient client;

	private static int users;

	private SharedClient() {
	}

	static QuorumKvClient acquire(Properties properties) {
		synchronized (LOCK) {
			if (client == null) {
				client = build(properties);
			}
			users++;
			return client;
		}
	}

	/** Releases one user's share; true when it was the last (the client is closed). */
	static boolean release() {
		synchronized (LOCK) {
			users--;
			if (users == 0 && client != null) {
				client.close();
				client = null;
				return true;
			}
			return false;
		}
	}

	private static QuorumKvClient build(Properties properties) {
		String[] seeds = Arrays.stream(properties.getProperty(QuorumKvDb.SEEDS, QuorumKvDb.DEFAULT_SEEDS).split(","))
			.map(String::strip)
			.filter((seed) -> !seed.isEmpty())
			.toArray(String[]::new);
		int threads = Integer.parseInt(properties.getProperty("threadcount", "1"));
		int connections = Integer.parseInt(properties.getProperty(QuorumKvDb.CONNECTIONS, Integer.toString(threads)));
		int attempts = Integer.parseInt(properties.getProperty(QuorumKvDb.MAX_ATTEMPTS, "3"));
		long timeoutMs = Long.parseLong(properties.getProperty(QuorumKvDb.RESPONSE_TIMEOUT_MS, "5000"));
		String routing = properties.getProperty(QuorumKvDb.ROUTING, "replica-aware").strip();
		return QuorumKvClient.builder().seeds(seeds).routing(switch (routing) {
			case "replica-aware" -> QuorumKvClientBuilder.Routing.REPLICA_AWARE;
			case "any-node" -> QuorumKvClientBuilder.Routing.ANY_NODE;
			default -> throw new IllegalArgumentException(
					QuorumKvDb.ROUTING + " must be replica-aware or any-node, not '" + routing + "'");
		})
			.maxConnectionsPerNode(connections)
			.responseTimeout(Duration.ofMillis(timeoutMs))
			.retryPolicy(RetryPolicy.DEFAULT.withMaxAttempts(attempts))
			.build();
	}

}
