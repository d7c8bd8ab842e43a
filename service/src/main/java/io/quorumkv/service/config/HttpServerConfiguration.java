package io.quorumkv.service.config;

import java.time.Duration;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Bounds how long a client may take to send a request body.
 * {@code server.netty.idle-timeout} only closes connections idle <em>between</em>
 * requests: a client that sends headers announcing a body and then goes silent would hold
 * the connection, and a public request slot of {@code quorumkv.http.max-in-flight},
 * forever. Reactor Netty's read timeout closes the connection once no byte of the body
 * arrived for {@code quorumkv.http.read-timeout} (default 30 s).
 */
@Configuration(proxyBeanMethods = false)
public class HttpServerConfiguration {

	@Bean
	NettyServerCustomizer requestReadTimeout(@Value("${quorumkv.http.read-timeout:30s}") Duration readTimeout) {
		if (readTimeout.isNegative() || readTimeout.isZero()) {
			throw new IllegalArgumentException("quorumkv.http.read-timeout must be positive");
		}
		return (server) -> server.readTimeout(readTimeout);
	}

}
