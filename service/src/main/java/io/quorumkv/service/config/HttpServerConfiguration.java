package io.quorumkv.service.config;

import java.time.Duration;

import io.quorumkv.service.http.BodyBudget;
import io.quorumkv.service.http.ConnectionTimeouts;
import io.quorumkv.service.http.DirectRoutes;
import io.quorumkv.service.http.EntityChannelDrain;
import io.quorumkv.service.http.EntityChannelHandler;
import io.quorumkv.service.http.InFlightLimiter;
import reactor.netty.NettyPipeline;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Bounds how long a client may hold a connection without sending.
 * <ul>
 * <li>{@code quorumkv.http.read-timeout} (30 s): a client that sends headers announcing a
 * body and then goes silent would otherwise hold the connection, and a public request
 * slot of {@code quorumkv.http.max-in-flight}, forever; once no byte of the body arrived
 * for that long it is answered 408 and the connection closed.</li>
 * <li>{@code quorumkv.http.idle-timeout} (60 s): a connection with no request under way
 * is closed after that long without a byte from the client.</li>
 * </ul>
 * Over HTTP/1.1 both are kept by one {@link ConnectionTimeouts} handler per connection.
 * With {@code server.http2.enabled=true} Reactor Netty's own per-request read timeout and
 * idle timeout do it, since the pipeline of an HTTP/2 connection has no HTTP/1.1 codec
 * for that handler to follow.
 * <p>
 * After it, with {@code quorumkv.http.direct-route} and
 * {@code quorumkv.http.direct-channel} (both on by default), each HTTP/1.1 connection
 * gets an {@link EntityChannelHandler} that serves the plain requests of
 * {@code /v0/entity} in the pipeline itself.
 */
@Configuration(proxyBeanMethods = false)
public class HttpServerConfiguration {

	@Bean
	NettyServerCustomizer connectionTimeouts(QuorumKvProperties properties,
			@Value("${server.http2.enabled:false}") boolean http2, DirectRoutes routes, BodyBudget bodies) {
		QuorumKvProperties.HttpProperties http = properties.http();
		if (http2) {
			return (server) -> server.readTimeout(http.readTimeout()).idleTimeout(http.idleTimeout());
		}
		boolean direct = http.directRoute() && http.directChannel();
		int maxBodySize = (int) http.maxBodySize().toBytes();
		return (server) -> server.doOnChannelInit((observer, channel, remote) -> {
			if (channel.pipeline().get(NettyPipeline.HttpCodec) != null) {
				channel.pipeline()
					.addAfter(NettyPipeline.HttpCodec, ConnectionTimeouts.NAME,
							new ConnectionTimeouts(http.readTimeout(), http.idleTimeout()));
				if (direct) {
					channel.pipeline()
						.addAfter(ConnectionTimeouts.NAME, EntityChannelHandler.NAME,
								new EntityChannelHandler(routes, bodies, maxBodySize));
				}
			}
		});
	}

	/**
	 * Holds a graceful shutdown until the requests {@link EntityChannelHandler} serves
	 * end.
	 */
	@Bean
	EntityChannelDrain entityChannelDrain(InFlightLimiter limiter,
			@Value("${spring.lifecycle.timeout-per-shutdown-phase:30s}") Duration timeout) {
		return new EntityChannelDrain(limiter, timeout);
	}

}
