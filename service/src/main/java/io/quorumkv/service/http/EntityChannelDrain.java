package io.quorumkv.service.http;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntSupplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.web.server.context.WebServerGracefulShutdownLifecycle;
import org.springframework.context.SmartLifecycle;

/**
 * Holds a graceful shutdown until the public requests under way are answered. Reactor
 * Netty's graceful shutdown waits for the requests it serves itself; the ones
 * {@link EntityChannelHandler} serves it does not see, and closes their connections,
 * which the handler defers until each answer is written. This runs right after Reactor
 * Netty's wait (one phase below it) and before the web server, the peer connections and
 * the storage stop: it waits until the in-flight limit counts no request, at most
 * {@code timeout}.
 */
public final class EntityChannelDrain implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(EntityChannelDrain.class);

	private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

	private final IntSupplier inFlight;

	private final Duration timeout;

	private volatile boolean running;

	public EntityChannelDrain(InFlightLimiter limiter, Duration timeout) {
		this(limiter::inFlight, timeout);
	}

	EntityChannelDrain(IntSupplier inFlight, Duration timeout) {
		this.inFlight = inFlight;
		this.timeout = timeout;
	}

	@Override
	public void start() {
		this.running = true;
	}

	@Override
	public void stop() {
		this.running = false;
		long deadline = System.nanoTime() + this.timeout.toNanos();
		while (this.inFlight.getAsInt() > 0) {
			if (System.nanoTime() - deadline >= 0) {
				logger.warn(this.inFlight.getAsInt() + " public requests still under way after " + this.timeout
						+ " of shutdown; stopping anyway");
				return;
			}
			LockSupport.parkNanos(POLL_NANOS);
		}
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE - 1;
	}

}
