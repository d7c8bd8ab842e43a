package io.quorumkv.service.http;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.timeout.ReadTimeoutException;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.concurrent.Ticker;
import org.jspecify.annotations.Nullable;

/**
 * The read timeout and the idle timeout of one HTTP/1.1 server connection, kept by one
 * handler for the connection's whole life.
 * <ul>
 * <li><b>Read timeout</b>: while a request's body is arriving (its head came, its last
 * part not yet), no byte for {@code readTimeout} raises Netty's
 * {@link ReadTimeoutException} through the pipeline, which the request's handler answers
 * 408 ({@link ErrorResponses}), and closes the connection.</li>
 * <li><b>Idle timeout</b>: while no request is being read or answered, nothing read for
 * {@code idleTimeout} since the last read or the end of the last response closes the
 * connection.</li>
 * </ul>
 * Reactor Netty's own {@code HttpServer.readTimeout} and {@code idleTimeout} do the same
 * with handlers added to and removed from the pipeline around every request (a
 * {@code ReadTimeoutHandler} per request body, an {@code IdleStateHandler} between
 * requests, each with a timer armed and cancelled): ~2.4% of a coordinator's CPU samples
 * at 19,000 PUT/s (docs/performance.md). Here a request only updates a few fields and a
 * time stamp; the one timer of the connection re-arms itself when it fires early.
 *
 * <p>
 * One difference: the read timeout of a pipelined request's body runs from its head's
 * arrival, also while an earlier request on the connection is still being answered
 * (Reactor Netty starts it when it gets to that request). Requests here end within their
 * deadline, seconds at most, far below the read timeout.
 *
 * <p>
 * Sits right after the HTTP codec, so it sees decoded requests coming in and the response
 * parts Reactor Netty writes going out. All its methods run on the connection's event
 * loop.
 */
public final class ConnectionTimeouts extends ChannelDuplexHandler {

	/** The handler's name in the pipeline. */
	public static final String NAME = "quorumkv.connectionTimeouts";

	private final long readTimeoutNanos;

	private final long idleTimeoutNanos;

	/** Requests received whose response has not been written to its end yet. */
	private int unanswered;

	/** A request's head came in and its last part did not yet. */
	private boolean readingBody;

	/** Bytes came in since the last read completed. */
	private boolean read;

	/** When something was last read, or the last response ended. */
	private long lastActivity;

	private @Nullable ScheduledFuture<?> check;

	/** The event loop's clock (a test's loop may move it forward by hand). */
	private Ticker ticker = Ticker.systemTicker();

	/** When {@link #check} fires. */
	private long checkAt;

	public ConnectionTimeouts(Duration readTimeout, Duration idleTimeout) {
		this.readTimeoutNanos = positiveNanos(readTimeout, "read timeout");
		this.idleTimeoutNanos = positiveNanos(idleTimeout, "idle timeout");
	}

	private static long positiveNanos(Duration timeout, String what) {
		if (timeout.isNegative() || timeout.isZero()) {
			throw new IllegalArgumentException("the " + what + " must be positive");
		}
		return timeout.toNanos();
	}

	@Override
	public void handlerAdded(ChannelHandlerContext ctx) {
		this.ticker = ctx.executor().ticker();
		if (ctx.channel().isActive()) {
			start(ctx);
		}
	}

	@Override
	public void channelActive(ChannelHandlerContext ctx) throws Exception {
		start(ctx);
		super.channelActive(ctx);
	}

	private void start(ChannelHandlerContext ctx) {
		if (this.check == null) {
			this.lastActivity = this.ticker.nanoTime();
			arm(ctx, this.lastActivity + this.idleTimeoutNanos);
		}
	}

	@Override
	public void handlerRemoved(ChannelHandlerContext ctx) {
		stop();
	}

	@Override
	public void channelInactive(ChannelHandlerContext ctx) throws Exception {
		stop();
		super.channelInactive(ctx);
	}

	private void stop() {
		ScheduledFuture<?> pending = this.check;
		this.check = null;
		if (pending != null) {
			pending.cancel(false);
		}
	}

	@Override
	public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
		this.read = true;
		if (msg instanceof HttpRequest) {
			this.unanswered++;
			this.readingBody = !(msg instanceof LastHttpContent);
		}
		else if (msg instanceof LastHttpContent) {
			this.readingBody = false;
		}
		super.channelRead(ctx, msg);
	}

	@Override
	public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
		if (this.read) {
			this.read = false;
			long now = this.ticker.nanoTime();
			this.lastActivity = now;
			// A body still to come must not wait for a check armed for the idle timeout.
			if (this.readingBody && this.check != null && this.checkAt - (now + this.readTimeoutNanos) > 0) {
				stop();
				arm(ctx, now + this.readTimeoutNanos);
			}
		}
		super.channelReadComplete(ctx);
	}

	@Override
	public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
		if (msg instanceof LastHttpContent && !isInterim(msg) && this.unanswered > 0) {
			this.unanswered--;
			if (this.unanswered == 0) {
				this.lastActivity = this.ticker.nanoTime();
			}
		}
		super.write(ctx, msg, promise);
	}

	/** A 1xx response (such as 100 Continue) comes before the real one. */
	private static boolean isInterim(Object msg) {
		return msg instanceof HttpResponse response && response.status().codeClass() == HttpStatusClass.INFORMATIONAL;
	}

	private void arm(ChannelHandlerContext ctx, long at) {
		this.checkAt = at;
		this.check = ctx.executor()
			.schedule(() -> check(ctx), Math.max(0, at - this.ticker.nanoTime()), TimeUnit.NANOSECONDS);
	}

	private void check(ChannelHandlerContext ctx) {
		if (this.check == null || !ctx.channel().isOpen()) {
			return;
		}
		this.check = null;
		long now = this.ticker.nanoTime();
		if (this.readingBody) {
			if (now - this.lastActivity >= this.readTimeoutNanos) {
				ctx.fireExceptionCaught(ReadTimeoutException.INSTANCE);
				ctx.close();
				return;
			}
			arm(ctx, this.lastActivity + this.readTimeoutNanos);
		}
		else if (this.unanswered == 0) {
			if (now - this.lastActivity >= this.idleTimeoutNanos) {
				ctx.close();
				return;
			}
			arm(ctx, this.lastActivity + this.idleTimeoutNanos);
		}
		else {
			// Requests are being answered: neither timeout runs; look again later.
			arm(ctx, now + Math.min(this.readTimeoutNanos, this.idleTimeoutNanos));
		}
	}

}
