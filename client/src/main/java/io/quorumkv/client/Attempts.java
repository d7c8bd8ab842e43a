package io.quorumkv.client;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Runs one request over its plan ({@link RequestRouting}): the first attempt to the
 * plan's first node, each retry to the next, as far as the {@link RetryPolicy} and the
 * {@link RetryBudget} allow. It alone decides whether a failure may be tried again (the
 * rules are {@link RetryPolicy}'s), and it keeps the {@link NodeHealth} the plans use: a
 * failed connection marks a node down, an answer marks it up.
 */
final class Attempts {

	private final RetryPolicy policy;

	private final RetryBudget budget;

	private final RequestRouting routing;

	private final NodeHealth health;

	Attempts(ClientConfig config, RequestRouting routing) {
		this.policy = config.retryPolicy();
		this.budget = new RetryBudget(this.policy.budgetRatio(), this.policy.budgetBurst());
		this.routing = routing;
		this.health = routing.health();
	}

	/**
	 * The request's outcome.
	 * @param operation what the request does (reads may be repeated)
	 * @param key the key's bytes for the router, or null
	 * @param attempt one attempt against one node; a scan's records are never repeated,
	 * so an attempt that has emitted anything is not retried
	 */
	<T> Flux<T> run(Operation operation, byte @Nullable [] key, Function<URI, Flux<T>> attempt) {
		return Flux.defer(() -> {
			this.budget.deposit();
			RequestRouting.Plan plan = this.routing.plan(key);
			if (plan.nodes().isEmpty()) {
				return Flux.error(new IllegalStateException("the router gave no node for " + operation));
			}
			return attempt(operation, plan, attempt, 1, new ArrayList<>());
		});
	}

	private <T> Flux<T> attempt(Operation operation, RequestRouting.Plan plan, Function<URI, Flux<T>> attempt,
			int number, List<QuorumKvException> earlier) {
		List<URI> nodes = plan.nodes();
		URI node = nodes.get((number - 1) % nodes.size());
		this.routing.sent(plan, node);
		AtomicBoolean emitted = new AtomicBoolean();
		Flux<T> flux = attempt.apply(node);
		if (operation == Operation.SCAN) {
			flux = flux.doOnNext((record) -> emitted.lazySet(true));
		}
		return flux.doOnComplete(() -> this.health.markUp(node)).onErrorResume((error) -> {
			Throwable mapped = Failures.forTransport(operation, node, error);
			if (!(mapped instanceof QuorumKvException failure)) {
				return Flux.error(mapped);
			}
			if (failure instanceof NodeUnavailableException) {
				this.health.markDown(node);
			}
			else if (failure.status() != 0) {
				this.health.markUp(node);
			}
			this.routing.failed(failure);
			if (emitted.get() || number >= this.policy.maxAttempts() || !retryable(operation, failure)) {
				return Flux.error(finish(failure, number, false, earlier));
			}
			if (!this.budget.tryWithdraw()) {
				return Flux.error(finish(failure, number, true, earlier));
			}
			earlier.add(failure);
			URI next = nodes.get(number % nodes.size());
			Flux<T> retry = attempt(operation, plan, attempt, number + 1, earlier);
			Duration delay = delay(number + 1, failure, next.equals(node));
			return delay.isZero() ? retry : Mono.delay(delay).thenMany(retry);
		});
	}

	/** The retry rules of {@link RetryPolicy}. */
	boolean retryable(Operation operation, QuorumKvException failure) {
		return switch (failure) {
			case NodeUnavailableException notSent -> true;
			case RequestOutcomeUnknownException unknown -> mayRepeat(operation);
			case ServiceUnavailableException unavailable -> mayRepeat(operation);
			case QuorumTimeoutException timeout -> mayRepeat(operation);
			case BadRequestException bad -> false;
			case NotAuthorizedException refused -> false;
			case PayloadTooLargeException tooLarge -> false;
			case UnexpectedResponseException unexpected -> false;
			case UnsupportedByNodeException unsupported -> false;
			case UpdateConflictException conflict -> false;
		};
	}

	/** Whether a request that may have reached a node may be sent again. */
	private boolean mayRepeat(Operation operation) {
		return operation.isRead() || (this.policy.retryWrites() && !operation.isConditional());
	}

	/**
	 * The wait before attempt {@code number} (2 or more): jittered exponential back-off.
	 */
	private Duration delay(int number, QuorumKvException failure, boolean sameNode) {
		long bound = Math.min(this.policy.maxBackoff().toNanos(),
				this.policy.backoff().toNanos() << Math.min(30, number - 2));
		long nanos = (bound > 0) ? ThreadLocalRandom.current().nextLong(bound + 1) : 0;
		if (sameNode && failure instanceof ServiceUnavailableException unavailable
				&& unavailable.retryAfter().isPresent()) {
			nanos = Math.max(nanos,
					Math.min(this.policy.maxBackoff().toNanos(), unavailable.retryAfter().get().toNanos()));
		}
		return Duration.ofNanos(nanos);
	}

	private static QuorumKvException finish(QuorumKvException failure, int attempts, boolean budgetExhausted,
			List<QuorumKvException> earlier) {
		for (QuorumKvException previous : earlier) {
			failure.addSuppressed(previous);
		}
		failure.recordAttempts(attempts, budgetExhausted);
		return failure;
	}

}
