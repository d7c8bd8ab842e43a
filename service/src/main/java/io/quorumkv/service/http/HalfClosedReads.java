package io.quorumkv.service.http;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.unix.Errors;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;
import org.slf4j.Marker;

import org.springframework.beans.factory.DisposableBean;

/**
 * Keeps one known Netty fault out of the node's errors. A client that half-closes its
 * side after its request (as {@code curl --no-keepalive} may, and as the server allows)
 * gets its answer; then Reactor Netty asks the connection to read again, and Netty 4.2's
 * epoll transport (4.2.13 to at least 4.2.18) answers {@code epoll_ctl(..) failed with
 * error(-2)}: it had taken the connection out of its epoll set when nothing was left to
 * watch, and modifies a registration that no longer exists. The connection is closed,
 * which it was going to be, and Reactor Netty logs the exception as an uncaught ERROR
 * with its stack, once per such request. Nothing is lost: the answer was written before.
 * <p>
 * This filter drops exactly that log event (Reactor Netty's server logger, ERROR, an
 * {@code epoll_ctl} failure with {@code ENOENT} among its causes) and counts it in
 * {@code quorumkv.http.half.closed.read.errors}; any other error passes. Only Netty's
 * native transports raise that exception, so elsewhere the filter never matches. It is
 * removed when the context closes.
 */
final class HalfClosedReads extends TurboFilter implements DisposableBean {

	/** The logger of Reactor Netty's server connections. */
	static final String LOGGER = "reactor.netty.transport.ServerTransport";

	private final Counter dropped;

	private final @Nullable LoggerContext context;

	private HalfClosedReads(MeterRegistry meters, @Nullable LoggerContext context) {
		this.dropped = Counter.builder("quorumkv.http.half.closed.read.errors")
			.description("Netty epoll's refusals to read again a connection its client half-closed, after the answer")
			.register(meters);
		this.context = context;
		setName("quorumkv-half-closed-reads");
	}

	/** A filter, added to Logback's context (when Logback is the logging system). */
	static HalfClosedReads install(MeterRegistry meters) {
		LoggerContext context = (LoggerFactory.getILoggerFactory() instanceof LoggerContext logback) ? logback : null;
		HalfClosedReads filter = new HalfClosedReads(meters, context);
		if (context != null) {
			filter.start();
			context.addTurboFilter(filter);
		}
		return filter;
	}

	@Override
	public FilterReply decide(@Nullable Marker marker, Logger logger, Level level, @Nullable String format,
			@Nullable Object @Nullable [] params, @Nullable Throwable error) {
		if (error == null || level != Level.ERROR || !LOGGER.equals(logger.getName()) || !staleRegistration(error)) {
			return FilterReply.NEUTRAL;
		}
		this.dropped.increment();
		return FilterReply.DENY;
	}

	private static boolean staleRegistration(Throwable error) {
		int depth = 0;
		for (Throwable cause = error; cause != null && depth < 8; cause = cause.getCause(), depth++) {
			if (cause instanceof Errors.NativeIoException failure
					&& failure.expectedErr() == Errors.ERRNO_ENOENT_NEGATIVE && failure.getMessage() != null
					&& failure.getMessage().startsWith("epoll_ctl")) {
				return true;
			}
		}
		return false;
	}

	@Override
	public void destroy() {
		if (this.context != null) {
			this.context.getTurboFilterList().remove(this);
			stop();
		}
	}

}
