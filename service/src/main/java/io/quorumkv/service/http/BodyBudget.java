package io.quorumkv.service.http;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.buffer.ByteBuf;
import io.quorumkv.storage.StorageOverloadedException;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerResponse;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.reactive.function.BodyExtractors;
import org.springframework.web.reactive.function.server.ServerRequest;

/**
 * Reads request bodies whole, up to a limit, only if they arrived intact, and bounds the
 * request bytes a node holds in memory at once, across all requests: the in-flight limit
 * alone would let a thousand 4 MB bodies take 4 GB. Bytes are reserved as they arrive and
 * released when the body has been handed on; a request that would exceed the budget is
 * refused with a 503 (retry later) and its bytes released.
 */
public final class BodyBudget {

	private final long capacity;

	private final AtomicLong used = new AtomicLong();

	public BodyBudget(long capacity, MeterRegistry meters) {
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
	public <T> Mono<T> read(ServerRequest request, int maxSize, Function<byte[], Mono<T>> use) {
		return read(request.body(BodyExtractors.toDataBuffers()), maxSize, () -> answeredByServer(request), use);
	}

	/**
	 * As above; {@code answeredByServer} tells whether the server has already refused the
	 * request itself.
	 */
	<T> Mono<T> read(Flux<DataBuffer> body, int maxSize, BooleanSupplier answeredByServer,
			Function<byte[], Mono<T>> use) {
		return Mono.defer(() -> {
			AtomicLong reserved = new AtomicLong();
			return DataBufferUtils.join(body.doOnNext((buffer) -> reserve(buffer, reserved)), maxSize)
				.map(BodyBudget::toBytes)
				.defaultIfEmpty(new byte[0])
				.flatMap((bytes) -> answeredByServer.getAsBoolean() ? Mono.error(MalformedBody.INSTANCE)
						: use.apply(bytes))
				.doFinally((signal) -> this.used.addAndGet(-reserved.get()));
		});
	}

	/**
	 * As above for a body read straight from Reactor Netty: each buffer is copied into
	 * the result as it arrives (into an array of {@code contentLength} bytes when the
	 * length was announced, so one copy in all), and Reactor Netty releases it.
	 */
	<T> Mono<T> read(Flux<ByteBuf> body, long contentLength, int maxSize, BooleanSupplier answeredByServer,
			Function<byte[], Mono<T>> use) {
		return Mono.defer(() -> {
			Joiner joiner = new Joiner(contentLength, maxSize);
			return body.doOnNext(joiner::append)
				.then(Mono.fromSupplier(joiner::bytes))
				.flatMap((bytes) -> answeredByServer.getAsBoolean() ? Mono.error(MalformedBody.INSTANCE)
						: use.apply(bytes))
				.doFinally((signal) -> this.used.addAndGet(-joiner.reserved.get()));
		});
	}

	/**
	 * Whether the server already answered (and refused) the request itself. When Reactor
	 * Netty fails to decode a body (a malformed chunk size, a chunk not ended by CRLF) it
	 * answers 400 itself and then <em>completes</em> the body with whatever came before
	 * the error: storing that would write a truncated value for a request the client was
	 * told was refused.
	 */
	private static boolean answeredByServer(ServerRequest request) {
		Object nativeRequest = ServerHttpRequestDecorator.getNativeRequest(request.exchange().getRequest());
		return nativeRequest instanceof HttpServerResponse response && response.hasSentHeaders();
	}

	/**
	 * Reserves {@code size} bytes for a body about to be read whole by the caller; false
	 * (nothing reserved) when the node holds too many bodies already. Given back with
	 * {@link #release}.
	 */
	boolean tryReserve(int size) {
		if (this.used.addAndGet(size) > this.capacity) {
			this.used.addAndGet(-size);
			return false;
		}
		return true;
	}

	/** Gives back bytes taken with {@link #tryReserve}. */
	void release(int size) {
		this.used.addAndGet(-size);
	}

	private void reserve(DataBuffer buffer, AtomicLong reserved) {
		try {
			reserve(buffer.readableByteCount(), reserved);
		}
		catch (StorageOverloadedException ex) {
			DataBufferUtils.release(buffer);
			throw ex;
		}
	}

	private void reserve(int size, AtomicLong reserved) {
		if (!tryReserve(size)) {
			throw new StorageOverloadedException("node overloaded: too many request bodies in memory, retry later");
		}
		reserved.addAndGet(size);
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
	 * Copies the buffers of one body into one array, within the limit and the budget:
	 * what is reserved is the array's capacity, taken as buffers arrive (the announced
	 * length at the first buffer, so one copy in all; doubling when chunked).
	 */
	private final class Joiner {

		private static final byte[] NONE = new byte[0];

		private final AtomicLong reserved = new AtomicLong();

		private final long contentLength;

		private final int maxSize;

		private byte[] bytes = NONE;

		private int size;

		Joiner(long contentLength, int maxSize) {
			this.contentLength = contentLength;
			this.maxSize = maxSize;
		}

		void append(ByteBuf buffer) {
			int length = buffer.readableBytes();
			if (length > this.maxSize - this.size) {
				throw new DataBufferLimitException("request body exceeds " + this.maxSize + " bytes");
			}
			int needed = this.size + length;
			if (needed > this.bytes.length) {
				long wanted = (this.size == 0 && this.contentLength >= needed) ? this.contentLength
						: Math.max(2L * this.bytes.length, needed);
				int capacity = (int) Math.min(wanted, this.maxSize);
				reserve(capacity - this.bytes.length, this.reserved);
				this.bytes = Arrays.copyOf(this.bytes, capacity);
			}
			buffer.getBytes(buffer.readerIndex(), this.bytes, this.size, length);
			this.size = needed;
		}

		byte[] bytes() {
			return (this.size == this.bytes.length) ? this.bytes : Arrays.copyOf(this.bytes, this.size);
		}

	}

	long used() {
		return this.used.get();
	}

	/** The body could not be decoded; the server has answered 400 already. */
	static final class MalformedBody extends ApiException {

		static final MalformedBody INSTANCE = new MalformedBody();

		private MalformedBody() {
			super(HttpStatus.BAD_REQUEST, "malformed request body");
		}

	}

}
