package io.quorumkv.client;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Retries, their budget and the failures that must not be retried: against seeds nothing
 * listens on, a listener that accepts and never answers (a paused node), and a real node
 * whose one request slot is taken (503 with {@code Retry-After}).
 */
class FailureHandlingTest {

	private static final Duration WAIT = Duration.ofSeconds(30);

	@Test
	void connectFailuresAreRetriedUntilTheBudgetIsSpent() {
		List<URI> dead = List.of(TestNodes.deadUrl(), TestNodes.deadUrl(), TestNodes.deadUrl());
		RetryPolicy policy = RetryPolicy.DEFAULT.withMaxAttempts(3)
			.withBackoff(Duration.ZERO, Duration.ZERO)
			.withBudget(0, 1);
		try (QuorumKvClient client = QuorumKvClient.builder().seeds(dead).retryPolicy(policy).build()) {
			// One token: the first request retries once, then the budget refuses.
			assertThatExceptionOfType(NodeUnavailableException.class).isThrownBy(() -> client.get("k").block(WAIT))
				.satisfies((ex) -> {
					assertThat(ex.attempts()).isEqualTo(2);
					assertThat(ex.retryBudgetExhausted()).isTrue();
					assertThat(ex.getSuppressed()).filteredOn(QuorumKvException.class::isInstance).hasSize(1);
					assertThat(ex.mayHaveBeenApplied()).isFalse();
				});
			// Nothing left: no retry at all.
			assertThatExceptionOfType(NodeUnavailableException.class)
				.isThrownBy(() -> client.put("k", new byte[1]).block(WAIT))
				.satisfies((ex) -> {
					assertThat(ex.attempts()).isEqualTo(1);
					assertThat(ex.retryBudgetExhausted()).isTrue();
				});
		}
		try (QuorumKvClient client = QuorumKvClient.builder()
			.seeds(dead)
			.retryPolicy(policy.withBudget(0, 10))
			.build()) {
			// A write that was never sent is retried like a read, up to maxAttempts.
			assertThatExceptionOfType(NodeUnavailableException.class)
				.isThrownBy(() -> client.put("k", new byte[1]).block(WAIT))
				.satisfies((ex) -> {
					assertThat(ex.attempts()).isEqualTo(3);
					assertThat(ex.retryBudgetExhausted()).isFalse();
					assertThat(ex.getSuppressed()).filteredOn(QuorumKvException.class::isInstance).hasSize(2);
				});
		}
	}

	@Test
	void aReadWithoutAnswerIsRetriedButAWriteIsNot() throws Exception {
		try (Silent silent = new Silent()) {
			RetryPolicy policy = RetryPolicy.DEFAULT.withBackoff(Duration.ZERO, Duration.ZERO);
			try (QuorumKvClient client = QuorumKvClient.builder()
				.seeds(List.of(silent.url()))
				// The connections counted are the requests' alone: no ring is read.
				.routing(QuorumKvClientBuilder.Routing.ANY_NODE)
				.responseTimeout(Duration.ofMillis(300))
				.retryPolicy(policy)
				.build()) {
				assertThatExceptionOfType(RequestOutcomeUnknownException.class)
					.isThrownBy(() -> client.put("k", new byte[] { 1 }).block(WAIT))
					.satisfies((ex) -> {
						assertThat(ex.attempts()).isEqualTo(1);
						assertThat(ex.mayHaveBeenApplied()).isTrue();
					});
				assertThat(silent.awaitAccepted(1)).isEqualTo(1);
				assertThatExceptionOfType(RequestOutcomeUnknownException.class)
					.isThrownBy(() -> client.get("k").block(WAIT))
					.satisfies((ex) -> assertThat(ex.attempts()).isEqualTo(3));
				assertThat(silent.awaitAccepted(4)).isEqualTo(4);
			}
			try (QuorumKvClient client = QuorumKvClient.builder()
				.seeds(List.of(silent.url()))
				// The connections counted are the requests' alone: no ring is read.
				.routing(QuorumKvClientBuilder.Routing.ANY_NODE)
				.responseTimeout(Duration.ofMillis(300))
				.retryPolicy(policy.withRetryWrites(true))
				.build()) {
				assertThatExceptionOfType(RequestOutcomeUnknownException.class)
					.isThrownBy(() -> client.delete("k").block(WAIT))
					.satisfies((ex) -> assertThat(ex.attempts()).isEqualTo(3));
			}
		}
	}

	@Test
	void anOverloadedNodeAnswers503WithRetryAfter() throws Exception {
		try (TestNodes node = TestNodes.start(1, Map.of("quorumkv.http.max-in-flight", "1"));
				Socket holder = new Socket(InetAddress.getLoopbackAddress(), node.url(0).getPort())) {
			// A PUT whose body never comes holds the node's only request slot.
			OutputStream out = holder.getOutputStream();
			out.write(("PUT /v0/entity?id=held HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n")
				.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			RetryPolicy policy = RetryPolicy.DEFAULT.withBackoff(Duration.ZERO, Duration.ofMillis(50));
			try (QuorumKvClient client = QuorumKvClient.builder()
				.seeds(List.of(node.url(0)))
				.retryPolicy(policy)
				.build()) {
				ServiceUnavailableException read = awaitOverloaded(() -> client.get("k").block(WAIT));
				assertThat(read.retryAfter()).contains(Duration.ofSeconds(1));
				assertThat(read.attempts()).isEqualTo(3);
				assertThatExceptionOfType(ServiceUnavailableException.class)
					.isThrownBy(() -> client.put("k", new byte[1]).block(WAIT))
					.satisfies((ex) -> assertThat(ex.attempts()).isEqualTo(1));
			}
		}
	}

	/** The slot is taken once the node has read the held request's head: poll briefly. */
	private static ServiceUnavailableException awaitOverloaded(Runnable request) throws InterruptedException {
		for (int i = 0; i < 50; i++) {
			try {
				request.run();
			}
			catch (ServiceUnavailableException ex) {
				return ex;
			}
			Thread.sleep(100);
		}
		throw new AssertionError("the node never answered 503");
	}

	/** Accepts connections and reads them, never answering. */
	private static final class Silent implements AutoCloseable {

		private final ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());

		private final AtomicInteger accepted = new AtomicInteger();

		private final List<Socket> sockets = new ArrayList<>();

		private final Thread acceptor = Thread.ofVirtual().start(this::accept);

		Silent() throws IOException {
		}

		URI url() {
			return URI.create("http://127.0.0.1:" + this.server.getLocalPort());
		}

		private void accept() {
			while (!this.server.isClosed()) {
				try {
					Socket socket = this.server.accept();
					synchronized (this.sockets) {
						this.sockets.add(socket);
					}
					this.accepted.incrementAndGet();
				}
				catch (IOException ex) {
					return;
				}
			}
		}

		/** The connections accepted, once at least {@code count} were or 5 s passed. */
		int awaitAccepted(int count) throws InterruptedException {
			long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
			while (this.accepted.get() < count && System.nanoTime() < deadline) {
				Thread.sleep(10);
			}
			return this.accepted.get();
		}

		@Override
		public void close() throws IOException {
			this.server.close();
			synchronized (this.sockets) {
				for (Socket socket : this.sockets) {
					socket.close();
				}
			}
		}

	}

}
