package io.quorumkv.service.peer;

import io.quorumkv.service.cluster.ClockSkewException;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ReactiveHttpOutputMessage;
import org.springframework.web.reactive.function.BodyExtractors;
import org.springframework.web.reactive.function.BodyInserter;
import org.springframework.web.reactive.function.client.ClientResponse;

/**
 * The bodies of the peer transport's calls: a request body of bytes already in memory, an
 * answer joined into one array, and a refusal read as the exception it means.
 */
public final class PeerAnswers {

	private static final byte[] NO_BYTES = new byte[0];

	private PeerAnswers() {
	}

	/** A request body of bytes already in memory: wrapped, not copied or encoded. */
	static BodyInserter<byte[], ReactiveHttpOutputMessage> bytes(byte[] body) {
		return (message, context) -> {
			message.getHeaders().setContentLength(body.length);
			return message.writeWith(Mono.just(DefaultDataBufferFactory.sharedInstance.wrap(body)));
		};
	}

	/** The whole answer body as one array, failing past {@code maxSize} bytes. */
	public static Mono<byte[]> joined(ClientResponse response, int maxSize) {
		return DataBufferUtils.join(response.body(BodyExtractors.toDataBuffers()), maxSize)
			.map(PeerAnswers::toBytes)
			.defaultIfEmpty(NO_BYTES)
			.onErrorMap(DataBufferLimitException.class,
					(ex) -> new PeerException("replica answer exceeds " + maxSize + " bytes"));
	}

	private static byte[] toBytes(DataBuffer buffer) {
		try {
			byte[] bytes = new byte[buffer.readableByteCount()];
			buffer.read(bytes);
			return bytes;
		}
		finally {
			DataBufferUtils.release(buffer);
		}
	}

	/**
	 * A refusal as its exception: {@link StaleRingException} for an older ring (409 with
	 * the peer's ring), {@link ClockSkewException} for a timestamp too far ahead, else
	 * {@link PeerException}; the message carries the status and the peer's reason.
	 */
	public static <T> Mono<T> failure(ClientResponse response) {
		int status = response.statusCode().value();
		HttpHeaders headers = response.headers().asHttpHeaders();
		boolean stale = status == HttpStatus.CONFLICT.value() && headers.getFirst(InternalApi.RING) != null;
		boolean skew = InternalApi.REFUSED_CLOCK_SKEW.equals(headers.getFirst(InternalApi.REFUSED));
		return response.bodyToMono(String.class).defaultIfEmpty("").flatMap((body) -> {
			String message = "replica answered " + status + ": " + body.strip();
			return Mono.error(stale ? new StaleRingException(message)
					: skew ? new ClockSkewException(message, 0) : new PeerException(message));
		});
	}

}
