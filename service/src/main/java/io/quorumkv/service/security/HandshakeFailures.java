package io.quorumkv.service.security;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.netty.NettyPipeline;
import reactor.netty.http.server.HttpServer;

/**
 * Counts and logs (at a rate limit) the TLS handshakes the server fails: a client that
 * does not trust this node's certificate, presents one this node does not trust, speaks
 * plain HTTP to the TLS port, or offers no common protocol. Reactor Netty closes such a
 * connection before any request exists, so nothing else would tell. One handler, shared
 * by every connection, placed right after the TLS handler; it leaves a connection's
 * pipeline once its handshake is done.
 */
@ChannelHandler.Sharable
final class HandshakeFailures extends ChannelInboundHandlerAdapter {

	/** Counter of failed handshakes. */
	static final String METER = "quorumkv.tls.handshake.failures";

	private static final Log logger = LogFactory.getLog(HandshakeFailures.class);

	private static final String NAME = "quorumkv.handshakeFailures";

	private final Counter failures;

	private final RateLimitedLog log = new RateLimitedLog(logger::warn);

	HandshakeFailures(MeterRegistry meters) {
		this.failures = Counter.builder(METER)
			.description("TLS handshakes the server failed (untrusted or missing certificates, plain HTTP)")
			.register(meters);
	}

	/** The server with this handler on every TLS connection. */
	HttpServer observe(HttpServer server) {
		return server.doOnChannelInit((observer, channel, remoteAddress) -> {
			if (channel.pipeline().get(NettyPipeline.SslHandler) != null) {
				channel.pipeline().addAfter(NettyPipeline.SslHandler, NAME, this);
			}
		});
	}

	@Override
	public void userEventTriggered(ChannelHandlerContext ctx, Object event) throws Exception {
		if (event instanceof SslHandshakeCompletionEvent completion) {
			if (!completion.isSuccess()) {
				this.failures.increment();
				Throwable cause = completion.cause();
				this.log.log(() -> "TLS handshake failed from " + ctx.channel().remoteAddress() + ": "
						+ ((cause.getMessage() != null) ? cause.getMessage() : cause.getClass().getSimpleName()));
			}
			ctx.fireUserEventTriggered(event);
			ctx.pipeline().remove(this);
			return;
		}
		ctx.fireUserEventTriggered(event);
	}

}
