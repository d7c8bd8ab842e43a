package io.quorumkv.client;

import java.net.URI;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * A request the client could not complete. The subclasses form a closed set, one per
 * answer a caller handles differently:
 *
 * <table>
 * <caption>What failed and whether it may have been applied</caption>
 * <tr>
 * <th>exception</th>
 * <th>cause</th>
 * <th>{@link #mayHaveBeenApplied()}</th>
 * </tr>
 * <tr>
 * <td>{@link BadRequestException}</td>
 * <td>400: bad key, replicas or range</td>
 * <td>no</td>
 * </tr>
 * <tr>
 * <td>{@link NotAuthorizedException}</td>
 * <td>401 or 403: no credential, an unknown one, or one without the access</td>
 * <td>no</td>
 * </tr>
 * <tr>
 * <td>{@link PayloadTooLargeException}</td>
 * <td>413: value over the node's limit</td>
 * <td>no</td>
 * </tr>
 * <tr>
 * <td>{@link ServiceUnavailableException}</td>
 * <td>503: overloaded or storage failed, with {@code Retry-After}</td>
 * <td>yes (a storage failure can break a write's quorum after some replicas took it)</td>
 * </tr>
 * <tr>
 * <td>{@link QuorumTimeoutException}</td>
 * <td>504: fewer than {@code ack} replicas confirmed in time</td>
 * <td>yes</td>
 * </tr>
 * <tr>
 * <td>{@link UnexpectedResponseException}</td>
 * <td>any other status, or a malformed answer</td>
 * <td>yes</td>
 * </tr>
 * <tr>
 * <td>{@link UnsupportedByNodeException}</td>
 * <td>501: the node does not implement the request (conditional writes on a node without
 * them)</td>
 * <td>no</td>
 * </tr>
 * <tr>
 * <td>{@link UpdateConflictException}</td>
 * <td>{@code update} lost every round to other writers (412 each time)</td>
 * <td>no</td>
 * </tr>
 * <tr>
 * <td>{@link NodeUnavailableException}</td>
 * <td>no node could be connected: nothing was sent</td>
 * <td>no</td>
 * </tr>
 * <tr>
 * <td>{@link RequestOutcomeUnknownException}</td>
 * <td>sent, but no answer (response timeout, connection lost)</td>
 * <td>yes</td>
 * </tr>
 * </table>
 *
 * A 404 is not an exception: an absent key reads as an empty {@code Mono}. Nor is a 412
 * to a conditional write: its {@link ConditionResult} says the condition did not hold.
 *
 * <p>
 * The exception of a request that was tried more than once is its last attempt's; the
 * earlier attempts' failures are {@linkplain #getSuppressed() suppressed} in it, and
 * {@link #attempts()} and {@link #retryBudgetExhausted()} tell why it stopped.
 */
public abstract sealed class QuorumKvException extends RuntimeException
		permits BadRequestException, NotAuthorizedException, PayloadTooLargeException, ServiceUnavailableException,
		QuorumTimeoutException, UnexpectedResponseException, UnsupportedByNodeException, UpdateConflictException,
		NodeUnavailableException, RequestOutcomeUnknownException {

	private final @Nullable URI node;

	private final int status;

	// Set once by the retry loop before the exception reaches the caller.
	private volatile int attempts = 1;

	private volatile boolean retryBudgetExhausted;

	QuorumKvException(String message, @Nullable URI node, int status, @Nullable Throwable cause) {
		super(message, cause);
		this.node = node;
		this.status = status;
	}

	/** The node that answered or failed, when one was reached or tried. */
	public Optional<URI> node() {
		return Optional.ofNullable(this.node);
	}

	/** The HTTP status of the answer, or 0 when there was none. */
	public int status() {
		return this.status;
	}

	/** How many attempts the request made, this one included. */
	public int attempts() {
		return this.attempts;
	}

	/**
	 * Whether a retry this request was allowed by its {@link RetryPolicy} was refused
	 * because the client's retry budget was spent.
	 */
	public boolean retryBudgetExhausted() {
		return this.retryBudgetExhausted;
	}

	/**
	 * Whether the request may have taken effect on the server despite the failure. For a
	 * write this means the value may be (or later become, through hinted handoff)
	 * visible.
	 */
	public abstract boolean mayHaveBeenApplied();

	void recordAttempts(int attempts, boolean budgetExhausted) {
		this.attempts = attempts;
		this.retryBudgetExhausted = budgetExhausted;
	}

}
