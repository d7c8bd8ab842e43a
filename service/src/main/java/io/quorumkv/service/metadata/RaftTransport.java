package io.quorumkv.service.metadata;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.peer.PeerAnswers;
import io.quorumkv.service.peer.PeerClient;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.Context;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.http.HttpMethod;

/**
 * Sends one Raft call to a peer through the node's one peer transport
 * ({@link PeerClient#call}): the peer's address is its base URL, the body a serialized
 * Ratis message, the answer the serialized reply. An answer other than 200 fails the call
 * with an {@link IOException} whose message is the peer's reason, which Ratis treats like
 * any lost call (it retries or elects).
 */
final class RaftTransport {

	private static final Log logger = LogFactory.getLog(RaftTransport.class);

	/**
	 * Reactor's context key of a local {@code onErrorDropped} hook (Reactor's
	 * {@code Hooks.KEY_ON_ERROR_DROPPED}).
	 */
	private static final String ON_ERROR_DROPPED = "reactor.onErrorDropped.local";

	/**
	 * A call whose caller gave up (Ratis interrupts a blocked vote when its server
	 * closes, or cancels an append it no longer needs) may still fail afterwards: there
	 * is no one left to tell, so the failure is logged at debug level, not dropped to
	 * Reactor's global hook as an error nobody handled.
	 */
	private static final Context DROPPED_AFTER_CANCEL = Context.of(ON_ERROR_DROPPED,
			(Consumer<Throwable>) (error) -> logger.debug("A Raft call failed after its caller gave up: " + error));

	private final PeerClient peers;

	private final Duration timeout;

	private final int maxMessage;

	private final Scheduler completions;

	private final Liveness liveness;

	/**
	 * @param completions where the asynchronous calls complete: Ratis goes on in their
	 * callbacks (taking locks, writing its log), which must not run on an event loop
	 * @param liveness the shared view of who is up, which each append of a leader carries
	 */
	RaftTransport(PeerClient peers, Duration timeout, int maxMessage, Scheduler completions, Liveness liveness) {
		this.peers = peers;
		this.liveness = liveness;
		this.timeout = timeout;
		this.maxMessage = maxMessage;
		this.completions = completions;
	}

	int maxMessage() {
		return this.maxMessage;
	}

	/** The call, lazily. */
	Mono<byte[]> call(String address, RaftKind kind, byte[] body) {
		// Not guarded by the breaker: Raft has its own retries and must reach a peer the
		// data path gave up on.
		return Mono
			.defer(() -> this.peers
				.call(Node.of(address), HttpMethod.POST, InternalApi.RAFT_PATH + "/" + kind.path(), body, null,
						Liveness.HEADER, (kind == RaftKind.APPEND) ? this.liveness.header() : null,
						(response) -> PeerAnswers.joined(response, this.maxMessage)
							.flatMap((answer) -> response.statusCode().is2xxSuccessful() ? Mono.just(answer)
									: Mono.error(new IOException(address + " answered " + response.statusCode().value()
											+ " to " + kind.path() + ": "
											+ new String(answer, StandardCharsets.UTF_8).strip()))))
				.timeout(this.timeout, this.peers.timers())
				.onErrorMap((error) -> !(error instanceof IOException),
						(error) -> new IOException(kind.path() + " to " + address + " failed: " + error, error)))
			.contextWrite(DROPPED_AFTER_CANCEL);
	}

	/** The call as Ratis' asynchronous protocols want it. */
	CompletableFuture<byte[]> async(String address, RaftKind kind, byte[] body) {
		return call(address, kind, body).publishOn(this.completions).toFuture();
	}

	/**
	 * The call, waited for: only on Ratis' own threads (an election, a log appender),
	 * never on an event loop.
	 */
	byte[] blocking(String address, RaftKind kind, byte[] body) throws IOException {
		try {
			byte[] answer = call(address, kind, body).block(this.timeout.plusSeconds(1));
			if (answer == null) {
				throw new IOException(kind.path() + " to " + address + ": no answer");
			}
			return answer;
		}
		catch (RuntimeException ex) {
			Throwable cause = Exceptions.unwrap(ex);
			if (cause instanceof IOException io) {
				throw io;
			}
			if (cause instanceof InterruptedException) {
				Thread.currentThread().interrupt();
				throw new InterruptedIOException(kind.path() + " to " + address + " interrupted");
			}
			throw new IOException(kind.path() + " to " + address + " failed: " + cause, cause);
		}
	}

}
