package io.quorumkv.service.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a node's ring ({@code GET /v0/ring}) and the operator's answers of membership
 * changes, for tests of real node processes.
 */
public final class RingWatch {

	private static final Pattern EPOCH = Pattern.compile("\"epoch\":(\\d+)");

	private final KvClient client;

	public RingWatch(KvClient client) {
		this.client = client;
	}

	/**
	 * The node's ring as JSON; fails unless it answers 200 within 30 s. A read has no
	 * side effect, so one that times out on a busy machine is asked again.
	 */
	public String ring(String baseUrl) {
		String[] body = new String[1];
		Eventually.eventually(Duration.ofSeconds(30), () -> {
			KvClient.Answer answer = this.client.getPath(baseUrl, "/v0/ring");
			assertThat(answer.status()).as("GET /v0/ring of %s: %s", baseUrl, answer.body()).isEqualTo(200);
			body[0] = answer.body();
		});
		return body[0];
	}

	public long epoch(String baseUrl) {
		Matcher matcher = EPOCH.matcher(ring(baseUrl));
		assertThat(matcher.find()).isTrue();
		return Long.parseLong(matcher.group(1));
	}

	/** Asks {@code coordinator} for a membership change; its answer. */
	public KvClient.Answer change(String coordinator, String action, String json) {
		return this.client.postAdmin(coordinator, "/actuator/quorumkv/" + action, json);
	}

	/**
	 * Waits until the rings of all {@code baseUrls} are at {@code epoch} with no node
	 * joining or leaving; the time waited.
	 */
	public Duration awaitSettled(java.util.List<String> baseUrls, long epoch, Duration limit) {
		long start = System.nanoTime();
		Eventually.eventually(limit, () -> {
			for (String baseUrl : baseUrls) {
				KvClient.Answer answer = this.client.getPath(baseUrl, "/v0/ring");
				assertThat(answer.status()).as(baseUrl).isEqualTo(200);
				assertThat(answer.body()).as(baseUrl)
					.contains("\"epoch\":" + epoch + ",")
					.doesNotContain("\"state\":\"joining\"")
					.doesNotContain("\"state\":\"leaving\"");
			}
		});
		return Duration.ofNanos(System.nanoTime() - start);
	}

	/** This node's transfers in the change under way (internal API), as JSON text. */
	public String transfers(String baseUrl) {
		return this.client.getInternal(baseUrl, "/internal/v0/transfers").body();
	}

	/**
	 * Waits up to {@code limit} until the node at {@code baseUrl} has received at least
	 * {@code keys} keys in the change under way; how many it has.
	 */
	public long awaitStreaming(String baseUrl, long keys, Duration limit) {
		Pattern received = Pattern.compile("\"done\":false,\"streams\":\\d+,\"streamsDone\":\\d+,\"keys\":(\\d+)");
		long[] seen = new long[1];
		Eventually.eventually(limit, () -> {
			java.util.regex.Matcher matcher = received.matcher(transfers(baseUrl));
			org.assertj.core.api.Assertions.assertThat(matcher.find()).as("%s streaming", baseUrl).isTrue();
			seen[0] = Long.parseLong(matcher.group(1));
			org.assertj.core.api.Assertions.assertThat(seen[0]).isGreaterThanOrEqualTo(keys);
		});
		return seen[0];
	}

}
