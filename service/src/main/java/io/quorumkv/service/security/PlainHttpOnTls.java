package io.quorumkv.service.security;

import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import reactor.netty.NettyPipeline;
import reactor.netty.http.server.HttpServer;

/**
 * Answers a client that speaks plain HTTP to the TLS port with a plain-HTTP {@code 400}
 * that says so, as nginx does, instead of the empty reply of a failed handshake. Stands
 * in front of Reactor Netty's TLS handler and looks only at a connection's first byte: a
 * TLS record starts with its content type (22, a handshake), an HTTP/1.1 request with a
 * method's capital letter. Anything else, and every connection after its first byte, goes
 * to the TLS handler untouched (this handler removes itself).
 *
 * <p>
 * Why a handler of our own here, when the design keeps none (one door in, one way out):
 * this one is no second door. It never parses a request nor hands one on; it refuses a
 * connection that never reached TLS, where no WebFlux filter can see it. Netty's
 * {@code OptionalSslHandler} would let the plain connection through to the HTTP codec and
 * leave the refusal to a filter: a plain-text path into the application that one
 * misordered filter would open. A first byte is the least that can be read to tell the
 * two apart.
 */
final class PlainHttpOnTls extends ChannelInboundHandlerAdapter {

	private static final String NAME = "quorumkv.plainHttpOnTls";

	private static final byte[] ANSWER;

	static {
		String body = "this port speaks TLS: use https://\n";
		ANSWER = ("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: "
				+ body.length() + "\r\nConnection: close\r\n\r\n" + body)
			.getBytes(StandardCharsets.US_ASCII);
	}

	private final Consumer<SocketAddress> seen;

	private PlainHttpOnTls(Consumer<SocketAddress> seen) {
		this.seen = seen;
	}

	/**
	 * The server with this handler in front of its TLS handler, if it speaks TLS;
	 * {@code seen} is told the address of each client answered.
	 */
	static HttpServer observe(HttpServer server, Consumer<SocketAddress> seen) {
		if (server.configuration().sslProvider() == null) {
			return server;
		}
		return server.doOnChannelInit((observer, channel, address) -> {
			ChannelPipeline pipeline = channel.pipeline();
			if (pipeline.get(NettyPipeline.SslHandler) != null) {
				pipeline.addBefore(NettyPipeline.SslHandler, NAME, new PlainHttpOnTls(seen));
			}
		});
	}

	@Override
	public void channelRead(ChannelHandlerContext context, Object message) {
		if (message instanceof ByteBuf bytes && bytes.isReadable()) {
			byte first = bytes.getByte(bytes.readerIndex());
			if (first >= 'A' && first <= 'Z') {
				bytes.release();
				this.seen.accept(context.channel().remoteAddress());
				context.writeAndFlush(Unpooled.wrappedBuffer(ANSWER)).addListener(ChannelFutureListener.CLOSE);
				return;
			}
			context.pipeline().remove(this);
		}
		context.fireChannelRead(message);
	}

}
