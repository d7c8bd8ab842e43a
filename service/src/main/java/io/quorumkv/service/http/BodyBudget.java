package io.quorumkv.service.http;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.storage.StorageOverloadedException;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerResponse;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.reactive.function.server.ServerRequest;

/**
 * Reads request bodies whole, up to a limit, only if they arrived intact, and bounds the
 * request bytes a node holds in memory at once, across all requests: the in-flight limit
 * alone would let a thousand 4 MB bodies take 4 GB. Each buffer is copied into the result
 * as it arrives (into an array of the announced length when there is one, so one copy in
 * all) and released; what is reserved is the array's capacity. A request that would
 * exceed the budget is refused with a 503 (retry later) and its bytes released.
 */
final class BodyBudget {

	private static final byte[] NONE = new byte[0];

	private final long capacity;

	private final AtomicLong used = new AtomicLong();

	BodyBudget(long capacity, MeterRegistry meters) {
		this.capacity = capacity;
		Gauge.builder("quorumkv.requests.buffered.bytes", this.used, AtomicLong::get)
			.description("Request body bytes held in memory")
			.baseUnit("bytes")
			.register(meters);
	}

	/**
	 * Joins a body of at most {@code maxSize} bytes into one array within the budget and
	 * hands it to {@code use}; the bytes count until {@code use}'s result completes.
	 * Fails with {@link DataBufferLimitException} over {@code maxSize} and with
	 * {@link StorageOverloadedException} when the node holds too many bodies already.
	 */
	<T> Mono<T> read(ServerRequest request, int maxSize, Function<byte[], Mono<T>> use) {
		ServerHttpRequest http = request.exchange().getRequest();
		return read(http.getBody(), http.getHeaders().getContentLength(), maxSize, () -> answeredByServer(http), use);
	}

	/**
	 * As above; {@code contentLength} is the announced length (-1 when none), and
	 * {@code answeredByServer} tells whether the server has already refused the request
	 * itself.
	 */
	<T> Mono<T> read(Flux<DataBuffer> body, long contentLength, int maxSize, BooleanSupplier answeredByServer,
			Function<byte[], Mono<T>> use) {
		return Mono.defer(() -> {
			Joiner joiner = new Joiner(contentLength, maxSize);
			return body.doOnNext(joiner::append)
				.then(Mono.fromSupplier(joiner::bytes))
				.flatMap((bytes) -> answeredByServer.getAsBoolean() ? Mono.error(MalformedBody.INSTANCE)
						: use.apply(bytes))
				.doFinally((signal) -> this.used.addAndGet(-joiner.reserved));
		});
	}

	/**
	 * Whether the server already answered (and refused) the request itself. When Reactor
	 * Netty fails to decode a body (a malformed chunk size, a chunk not ended by CRLF) it
	 * answers 400 itself and then <em>completes</em> the body with whatever came before
	 * the error: storing that would write a truncated value for a request the client was
	 * told was refused.
	 */
	private static boolean answeredByServer(ServerHttpRequest request) {
		Object nativeRequest;
		try {
			nativeRequest = ServerHttpRequestDecorator.getNativeRequest(request);
		}
		catch (IllegalArgumentException | IllegalStateException ex) {
			return false; // not served by Reactor Netty (a mock request in a test)
		}
		return nativeRequest instanceof HttpServerResponse response && response.hasSentHeaders();
	}

	long used() {
		return this.used.get();
	}

	/**
	 * Copies the buffers of one body into one array, within the limit and the budget,
	 * releasing each buffer: what is reserved is the array's capacity, taken as buffers
	 * arrive (the announced length at the first buffer; doubling when chunked). Touched
	 * by one subscriber at a time; {@link #reserved} is read after the body ended.
	 */
	private final class Joiner {

		private final long contentLength;

		private final int maxSize;

		private byte[] bytes = NONE;

		private int size;

		private volatile long reserved;

		Joiner(long contentLength, int maxSize) {
			this.contentLength = contentLength;
			this.maxSize = maxSize;
		}

		void append(DataBuffer buffer) {
			try {
				int length = buffer.readableByteCount();
				if (length > this.maxSize - this.size) {
					throw new DataBufferLimitException("request body exceeds " + this.maxSize + " bytes");
				}
				int needed = this.size + length;
				if (needed > this.bytes.length) {
					long wanted = (this.size == 0 && this.contentLength >= needed) ? this.contentLength
							: Math.max(2L * this.bytes.length, needed);
					int capacity = (int) Math.min(wanted, this.maxSize);
					reserve(capacity - this.bytes.length);
					this.bytes = Arrays.copyOf(this.bytes, capacity);
				}
				buffer.read(this.bytes, this.size, length);
				this.size = needed;
			}
			finally {
				DataBufferUtils.release(buffer);
			}
		}

		private void reserve(int size) {
			if (BodyBudget.this.used.addAndGet(size) > BodyBudget.this.capacity) {
				BodyBudget.this.used.addAndGet(-size);
				throw new StorageOverloadedException("node overloaded: too many request bodies in memory, retry later");
			}
			this.reserved += size;
		}

		byte[] bytes() {
			return (this.size == this.bytes.length) ? this.bytes : Arrays.copyOf(this.bytes, this.size);
		}

	}

	/** The body could not be decoded; the server has answered 400 already. */
	static final class MalformedBody extends ApiException {

		static final MalformedBody INSTANCE = new MalformedBody();

		private MalformedBody() {
			super(HttpStatus.BAD_REQUEST, "malformed request body");
		}

	}

}
