package io.quorumkv.client;

import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * Turns a node's error answer, or a transport failure, into its
 * {@link QuorumKvException}.
 */
final class Failures {

	private static final int MAX_REASON = 200;

	private Failures() {
	}

	/** The exception of an error status (not 2xx, not a 404 of a single entity). */
	static QuorumKvException forStatus(Operation operation, URI node, int status, byte[] body,
			@Nullable String retryAfter) {
		String message = operation + " at " + node + ": " + status + " " + reason(body);
		return switch (status) {
			case 400 -> new BadRequestException(message, node, status, null);
			case 401, 403 -> new NotAuthorizedException(message, node, status, null);
			case 413 -> new PayloadTooLargeException(message, node, status, null);
			case 503 -> new ServiceUnavailableException(message, node, retryAfter(retryAfter));
			case 504 -> new QuorumTimeoutException(message, node, status, null);
			case 501 -> new UnsupportedByNodeException(
					operation + " at " + node + ": the node does not support it (501): " + reason(body), node, null);
			default -> new UnexpectedResponseException(message, node, status, null);
		};
	}

	/**
	 * The exception of a failure without an answer: connection failures (nothing was
	 * sent) become {@link NodeUnavailableException}, timeouts and lost connections (the
	 * request may have been sent) {@link RequestOutcomeUnknownException}; anything else
	 * is not a transport failure and is returned as it is.
	 */
	static Throwable forTransport(Operation operation, URI node, Throwable error) {
		if (error instanceof QuorumKvException) {
			return error;
		}
		if (notSent(error)) {
			return new NodeUnavailableException(operation + " at " + node + ": cannot connect: " + error, node, 0,
					error);
		}
		if (error instanceof IOException || error instanceof io.netty.handler.timeout.TimeoutException
				|| error instanceof java.util.concurrent.TimeoutException) {
			return new RequestOutcomeUnknownException(operation + " at " + node + ": no answer: " + error, node, 0,
					error);
		}
		return error;
	}

	private static boolean notSent(Throwable error) {
		// The pool's "pending acquire" limit or timeout: no connection was had, so
		// nothing
		// was sent (Reactor Netty's shaded reactor-pool exceptions, matched by name).
		String name = error.getClass().getSimpleName();
		// A failed TLS handshake comes before the request is written.
		return error instanceof ConnectException || error instanceof NoRouteToHostException
				|| error instanceof UnknownHostException || error instanceof javax.net.ssl.SSLHandshakeException
				|| name.startsWith("PoolAcquire");
	}

	/**
	 * {@code Retry-After} in seconds (the server's form); an HTTP date is not used here.
	 */
	static @Nullable Duration retryAfter(@Nullable String header) {
		if (header == null) {
			return null;
		}
		try {
			long seconds = Long.parseLong(header.strip());
			return (seconds >= 0 && seconds <= 86_400) ? Duration.ofSeconds(seconds) : null;
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

	private static String reason(byte[] body) {
		String text = new String(body, 0, Math.min(body.length, MAX_REASON), StandardCharsets.UTF_8).strip();
		return text.isEmpty() ? "(no reason given)" : text;
	}

}
