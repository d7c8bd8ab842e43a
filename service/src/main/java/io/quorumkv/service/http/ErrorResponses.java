package io.quorumkv.service.http;

import io.netty.handler.timeout.ReadTimeoutException;
import io.quorumkv.service.cluster.NotServingException;
import io.quorumkv.service.paxos.Paxos;
import io.quorumkv.service.replication.QuorumNotReachedException;
import io.quorumkv.service.replication.ReplicaUnavailableException;
import io.quorumkv.storage.CorruptedStorageException;
import io.quorumkv.storage.StorageClosedException;
import io.quorumkv.storage.StorageException;
import io.quorumkv.storage.StorageOverloadedException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;
import reactor.netty.channel.AbortedException;

import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.ResponseStatusException;

/**
 * Turns every failure of a public request into a status and a short plain-text body that
 * says what was wrong. Bad input is a 4xx; what the client should retry is a 503 with
 * {@code Retry-After} or a 504; only a fault of the node itself is a 500. No body names a
 * Java class or a peer's address: those go to the log (at debug for a 503 or 504 for want
 * of replicas, which the metrics and the admin views show too).
 */
final class ErrorResponses {

	private static final Log logger = LogFactory.getLog(ErrorResponses.class);

	private ErrorResponses() {
	}

	static Mono<ServerResponse> toResponse(Throwable error) {
		return Mono.just(toReply(error));
	}

	static Reply toReply(Throwable error) {
		return switch (error) {
			case ApiException api -> Reply.text(api.status(), api.getMessage());
			case InvalidMediaTypeException badHeader ->
				Reply.text(HttpStatus.BAD_REQUEST, "malformed media type in a header: " + badHeader.getMessage());
			case DataBufferLimitException tooLarge ->
				Reply.text(HttpStatus.CONTENT_TOO_LARGE, "request body too large");
			case ResponseStatusException status -> Reply.text(status.getStatusCode(),
					(status.getReason() != null) ? status.getReason() : "request refused");
			// The detail (which peer, at which address, failed how) is for the log and
			// the
			// admin views, not for a client that may not even have authenticated.
			case QuorumNotReachedException quorum -> {
				logger.debug(quorum.getMessage());
				yield Reply.text(HttpStatus.GATEWAY_TIMEOUT, quorum.summary());
			}
			case Paxos.Unresolved unresolved -> {
				logger.debug(unresolved.getMessage());
				yield Reply.text(HttpStatus.GATEWAY_TIMEOUT, unresolved.maybeApplied()
						? "conditional request not decided in time: it may have been applied; read with consistency=serial"
						: "conditional request not decided in time (contention or unreachable replicas): not applied");
			}
			case ReplicaUnavailableException unavailable -> {
				logger.debug(unavailable.getMessage());
				yield Reply.retryLater(unavailable.summary());
			}
			case NotServingException notServing -> Reply.retryLater(notServing.getMessage());
			// The client stopped sending its body (quorumkv.http.read-timeout) or went
			// away mid-body: its fault, not the node's; the connection is closed either
			// way.
			case ReadTimeoutException timeout ->
				Reply.text(HttpStatus.REQUEST_TIMEOUT, "request body not received in time");
			case AbortedException aborted ->
				Reply.text(HttpStatus.BAD_REQUEST, "connection closed before the request ended");
			case StorageOverloadedException overloaded -> Reply.retryLater(overloaded.getMessage());
			case StorageClosedException closed -> Reply.retryLater("node is shutting down");
			case CorruptedStorageException corrupted -> {
				logger.error("Storage corruption: " + corrupted.getMessage());
				yield Reply.text(HttpStatus.INTERNAL_SERVER_ERROR, "storage corrupted: " + corrupted.getMessage());
			}
			case StorageException storage -> {
				logger.warn("Storage failure: " + storage.getMessage(), storage.getCause());
				yield Reply.text(HttpStatus.SERVICE_UNAVAILABLE, "storage failure: " + storage.getMessage());
			}
			default -> {
				logger.error("Unexpected failure of a request", error);
				yield Reply.text(HttpStatus.INTERNAL_SERVER_ERROR, "internal error");
			}
		};
	}

}
