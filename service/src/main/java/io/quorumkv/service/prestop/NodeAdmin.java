package io.quorumkv.service.prestop;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.JsonNodeFactory;

/**
 * The admin calls {@code scripts/qkv decommission --wait} makes, through the node's
 * management port with an admin API key: asks the first of {@code QKV_NODES} that answers
 * to decommission this node ({@code POST /actuator/quorumkv/decommission}), then reads
 * that node's ring ({@code GET /actuator/quorumkv}) until this node's state is
 * {@code removed}, within a bound. A refusal that may pass (another change under way, no
 * leader of the metadata group) is asked again; a decommission of this node already under
 * way (the hook run a second time) is waited for; a refused key is not asked again.
 */
final class NodeAdmin implements AutoCloseable {

	/** How a decommission ended for the program. */
	enum Result {

		/** This node is {@code removed} in the ring. */
		LEFT,

		/** Not asked (no key, refused), or not ended within the bound. */
		UNFINISHED

	}

	/** A change's answer comes once the metadata log applied it (at most 15 s). */
	private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);

	/** How often the wait says where the decommission is. */
	private static final Duration PROGRESS_EVERY = Duration.ofSeconds(30);

	private final PreStopSettings settings;

	private final PreStopLog log;

	private final HttpClient client;

	private final JsonMapper json = JsonMapper.builder().build();

	private NodeAdmin(PreStopSettings settings, PreStopLog log, HttpClient client) {
		this.settings = settings;
		this.log = log;
		this.client = client;
	}

	static NodeAdmin open(PreStopSettings settings, PreStopLog log) throws IOException, GeneralSecurityException {
		HttpClient.Builder builder = HttpClient.newBuilder()
			.connectTimeout(Duration.ofSeconds(5))
			.version(HttpClient.Version.HTTP_1_1);
		Path ca = settings.caCert();
		if (ca != null) {
			builder.sslContext(PemTrust.context(ca));
		}
		return new NodeAdmin(settings, log, builder.build());
	}

	/** Asks for the decommission of {@code self} and waits until {@code deadline}. */
	Result decommission(String self, String adminKey, long deadline) {
		String body = JsonNodeFactory.instance.objectNode().put("url", self).toString();
		boolean asked = false;
		String lastRefusal = "";
		while (!asked && System.nanoTime() < deadline) {
			for (URI node : this.settings.nodes()) {
				HttpResponse<String> answer = send(
						HttpRequest.newBuilder(node.resolve("/actuator/quorumkv/decommission"))
							.timeout(timeout(deadline))
							.header("Authorization", "Bearer " + adminKey)
							.header("Content-Type", "application/json")
							.POST(HttpRequest.BodyPublishers.ofString(body)),
						node, false);
				if (answer == null) {
					continue;
				}
				int status = answer.statusCode();
				if (status == 200) {
					this.log
						.info(node + " agreed to decommission " + self + ": " + StatefulSetScale.brief(answer.body())
								+ "; waiting until it has left (at most " + seconds(deadline) + " s)");
					asked = true;
				}
				else if (status == 401 || status == 403) {
					this.log.info(node + " refused the admin key (HTTP " + status + ": "
							+ StatefulSetScale.brief(answer.body())
							+ "): NOT decommissioning; check QKV_ADMIN_KEY, then decommission or remove " + self
							+ " by hand (scripts/qkv)");
					return Result.UNFINISHED;
				}
				else {
					String state = state(node, self, adminKey, deadline);
					if ("leaving".equals(state) || "removed".equals(state)) {
						this.log.info(self + " is " + state + " already (a decommission under way); waiting for it");
						asked = true;
					}
					else {
						String refusal = node + " refused the decommission (HTTP " + status + ": "
								+ StatefulSetScale.brief(answer.body()) + ")";
						if (!refusal.equals(lastRefusal)) {
							this.log.info(refusal + "; asking again every " + this.settings.poll().toMillis() + " ms");
							lastRefusal = refusal;
						}
					}
				}
				break;
			}
			if (!asked) {
				StatefulSetScale.sleep(this.settings.poll());
			}
		}
		if (!asked) {
			this.log.info("the decommission of " + self + " was never agreed within the bound (QKV_PRESTOP_LIMIT "
					+ this.settings.limit().toSeconds() + " s): the pod stops a member; take it out with "
					+ "scripts/qkv remove");
			return Result.UNFINISHED;
		}
		return awaitLeft(self, adminKey, deadline);
	}

	private Result awaitLeft(String self, String adminKey, long deadline) {
		long start = System.nanoTime();
		long nextProgress = start + PROGRESS_EVERY.toNanos();
		String state = null;
		while (System.nanoTime() < deadline) {
			for (URI node : this.settings.nodes()) {
				state = state(node, self, adminKey, deadline);
				if (state != null) {
					break;
				}
			}
			if ("removed".equals(state)) {
				this.log.info(self + " has left the cluster (removed) after "
						+ Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms");
				return Result.LEFT;
			}
			if (System.nanoTime() >= nextProgress) {
				this.log.info("still decommissioning " + self + " (state " + state + ") after "
						+ Duration.ofNanos(System.nanoTime() - start).toSeconds() + " s");
				nextProgress += PROGRESS_EVERY.toNanos();
			}
			StatefulSetScale.sleep(this.settings.poll());
		}
		this.log.info("the decommission of " + self + " has not ended within the bound (QKV_PRESTOP_LIMIT "
				+ this.settings.limit().toSeconds() + " s; state " + state
				+ "): the pod stops mid-change, which then waits for it (docs/kubernetes.md, \"Scaling down\")");
		return Result.UNFINISHED;
	}

	/** This node's state in {@code node}'s ring, or null when it cannot be read. */
	private @Nullable String state(URI node, String self, String adminKey, long deadline) {
		HttpResponse<String> answer = send(HttpRequest.newBuilder(node.resolve("/actuator/quorumkv"))
			.timeout(timeout(deadline))
			.header("Authorization", "Bearer " + adminKey)
			.header("Accept", "application/json")
			.GET(), node, true);
		if (answer == null || answer.statusCode() != 200) {
			return null;
		}
		try {
			for (JsonNode member : this.json.readTree(answer.body()).path("ring").path("nodes")) {
				String url = member.path("url").asString("").replaceAll("/+$", "");
				if (url.equals(self) || member.path("id").asString("").equals(self)) {
					return member.path("state").asString(null);
				}
			}
			return "absent";
		}
		catch (JacksonException ex) {
			return null;
		}
	}

	/** The answer, or null when the node did not answer (logged unless quiet). */
	private @Nullable HttpResponse<String> send(HttpRequest.Builder request, URI node, boolean quiet) {
		try {
			return this.client.send(request.build(), HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			if (!quiet) {
				this.log.info(node + " did not answer: " + ex);
			}
			return null;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return null;
		}
	}

	/** A call's timeout: at most {@link #CALL_TIMEOUT}, and never past the deadline. */
	private static Duration timeout(long deadline) {
		Duration left = Duration.ofNanos(deadline - System.nanoTime());
		return (left.compareTo(CALL_TIMEOUT) < 0) ? Duration.ofMillis(Math.max(100, left.toMillis())) : CALL_TIMEOUT;
	}

	private static long seconds(long deadline) {
		return Math.max(0, Duration.ofNanos(deadline - System.nanoTime()).toSeconds());
	}

	@Override
	public void close() {
		this.client.close();
	}

}
