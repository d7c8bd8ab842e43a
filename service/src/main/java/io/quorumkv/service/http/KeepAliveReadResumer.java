package io.quorumkv.service.http;

import java.time.Duration;
import java.util.Objects;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.HttpContent;
import org.jspecify.annotations.Nullable;
import reactor.netty.NettyPipeline;
import reactor.netty.channel.ChannelOperations;
import reactor.netty.http.HttpConnectionLiveness;
import reactor.netty.http.IdleTimeoutHandler;
import reactor.netty.http.server.HttpServer;

/**
 * Resumes reading a keep-alive connection that Reactor Netty (1.3.6 and 1.3.7) leaves
 * stalled after it answered a request it had queued; see reactor/reactor-netty#4361.
 * <p>
 * An HTTP/1.1 connection reads on demand: while a request is served, auto-read is off and
 * only its body subscriber asks for more. When the next request arrives before the
 * previous request's operations have terminated (that answer came from another thread:
 * H2, Derby, a peer; or the client pipelines), Reactor Netty's {@code HttpTrafficHandler}
 * queues it together with the rest of its message: its body up to the
 * {@code LastHttpContent}, or an empty {@code LastHttpContent} for a request without a
 * body. When the previous operations terminate it dispatches the queued request. If that
 * request is answered at once, before its body is read (any refusal: 400, 404, 405, 413
 * by {@code Content-Length}, 503 of the in-flight limit; or a GET of the status), its
 * operations terminate while the rest of its message is still queued. The drain then
 * hands that rest to no operations ({@code No ChannelOperation attached} at DEBUG), finds
 * its queue empty and returns; nothing turns auto-read back on (the operations do so when
 * a body ends) and nothing asks for a read (Reactor Netty does so when a drain finds an
 * empty queue at once): the next request stays in the socket until the client gives up,
 * and the idle timeout is not armed either.
 * <p>
 * This handler sits right after {@code HttpTrafficHandler}. When part of a request's
 * message passes it with no operations bound, it does, behind the drain that Reactor
 * Netty may have scheduled already, what Reactor Netty does when a request has been read
 * and answered: arm the idle timeout and turn auto-read on, unless a new request owns the
 * connection by then. Reading with no request in progress is what Reactor Netty does
 * anyway: what comes goes through {@code HttpTrafficHandler} as any other bytes, and the
 * next request's operations turn auto-read off again.
 */
public final class KeepAliveReadResumer extends ChannelInboundHandlerAdapter {

	static final String NAME = "quorumkv.keepAliveReadResumer";

	private final @Nullable Duration idleTimeout;

	/** Whether a resume is scheduled already; touched on the channel's loop only. */
	private boolean scheduled;

	private KeepAliveReadResumer(@Nullable Duration idleTimeout) {
		this.idleTimeout = idleTimeout;
	}

	/**
	 * Adds the handler to every HTTP/1.1 connection of {@code server}.
	 * @param idleTimeout the server's idle timeout ({@code server.netty.idle-timeout}),
	 * null when it has none
	 */
	public static HttpServer install(HttpServer server, @Nullable Duration idleTimeout) {
		Objects.requireNonNull(server, "server");
		return server.doOnChannelInit((observer, channel, remoteAddress) -> {
			ChannelPipeline pipeline = channel.pipeline();
			if (pipeline.get(NettyPipeline.HttpTrafficHandler) != null) {
				pipeline.addAfter(NettyPipeline.HttpTrafficHandler, NAME, new KeepAliveReadResumer(idleTimeout));
			}
		});
	}

	@Override
	public void channelRead(ChannelHandlerContext ctx, Object msg) {
		if (msg instanceof HttpContent && !this.scheduled && ChannelOperations.get(ctx.channel()) == null) {
			// Scheduled, not done here: Reactor Netty may have scheduled a drain of
			// further queued requests before handing on this content; it goes first.
			this.scheduled = true;
			ctx.executor().execute(() -> resume(ctx));
		}
		ctx.fireChannelRead(msg);
	}

	private void resume(ChannelHandlerContext ctx) {
		this.scheduled = false;
		Channel channel = ctx.channel();
		if (!channel.isActive() || ChannelOperations.get(channel) != null) {
			// closed, or a queued request was dispatched: its operations read
			return;
		}
		if (this.idleTimeout != null) {
			IdleTimeoutHandler.addIdleTimeoutHandler(channel.pipeline(), this.idleTimeout,
					HttpConnectionLiveness.CLOSE);
		}
		// Reads at once if auto-read was off.
		channel.config().setAutoRead(true);
	}

}
