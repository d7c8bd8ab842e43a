package io.quorumkv.service.http;

import java.util.function.Function;

import reactor.core.publisher.Mono;

/**
 * The body of a request, read whole within {@link BodyBudget} by whichever server layer
 * received it, and handed to the code that answers.
 */
@FunctionalInterface
interface RequestBody {

	/**
	 * Reads at most {@code maxSize} bytes (413 above) and answers with what {@code use}
	 * makes of them; the bytes count against the budget until that answer is ready.
	 */
	Mono<Reply> read(int maxSize, Function<byte[], Mono<Reply>> use);

}
