package io.quorumkv.service.http;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.storage.StorageOverloadedException;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;

/**
 * Bounds the request bytes a node holds in memory at once, across all requests: the
 * in-flight limit alone would let a thousand 4 MB bodies take 4 GB. Bytes are reserved as
 * they arrive and released when the body has been handed on; a request that would exceed
 * the budget is refused with a 503 (retry later) and its bytes released.
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
	public <T> Mono<T> read(Flux<DataBuffer> body, int maxSize, Function<byte[], Mono<T>> use) {
		return Mono.defer(() -> {
			AtomicLong reserved = new AtomicLong();
			return DataBufferUtils.join(body.doOnNext((buffer) -> reserve(buffer, reserved)), maxSize)
				.map(BodyBudget::toBytes)
				.defaultIfEmpty(new byte[0])
				.flatMap(use)
				.doFinally((signal) -> this.used.addAndGet(-reserved.get()));
		});
	}

	private void reserve(DataBuffer buffer, AtomicLong reserved) {
		int size = buffer.readableByteCount();
		if (this.used.addAndGet(size) > this.capacity) {
			this.used.addAndGet(-size);
			DataBufferUtils.release(buffer);
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

	long used() {
		return this.used.get();
	}

}
