package io.quorumkv.service.security;

import java.net.SocketAddress;
import java.time.Duration;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.netty.channel.ChannelMetricsRecorder;
import reactor.netty.http.server.HttpServer;

/**
 * Counts and logs (at a rate limit) the TLS handshakes the server fails: a client that
 * does not trust this node's certificate, presents one this node does not trust, speaks
 * plain HTTP to the TLS port ({@link PlainHttpOnTls} tells), or offers no common
 * protocol. Reactor Netty closes such a connection before any request exists, so nothing
 * else would tell.
 * <p>
 * Reactor Netty times every handshake itself and reports it, with its outcome, to a
 * connection-level metrics recorder
 * ({@link HttpServer#metrics(boolean, java.util.function.Supplier)}): this is that
 * recorder, on a server with TLS only. It is not an HTTP recorder, so Reactor Netty
 * observes no request for it; it keeps only the failed handshakes and lets the byte
 * counts go.
 */
final class HandshakeFailures implements ChannelMetricsRecorder {

	/** Counter of failed handshakes. */
	static final String METER = "quorumkv.tls.handshake.failures";

	/** Reactor Netty's status of a handshake that succeeded. */
	private static final String SUCCESS = "SUCCESS";

	private static final Log logger = LogFactory.getLog(HandshakeFailures.class);

	private final Counter failures;

	private final RateLimitedLog log = new RateLimitedLog(logger::warn);

	HandshakeFailures(MeterRegistry meters) {
		this.failures = Counter.builder(METER)
			.description("TLS handshakes the server failed (untrusted or missing certificates, plain HTTP)")
			.register(meters);
	}

	/** The server with this recorder if it speaks TLS, as it is otherwise. */
	HttpServer observe(HttpServer server) {
		return (server.configuration().sslProvider() != null) ? server.metrics(true, () -> this) : server;
	}

	@Override
	public void recordTlsHandshakeTime(SocketAddress remoteAddress, Duration time, String status) {
		if (!SUCCESS.equals(status)) {
			this.failures.increment();
			this.log.log(() -> "TLS handshake failed from " + remoteAddress + " after " + time.toMillis()
					+ " ms (the client's side tells why; Reactor Netty logs it at DEBUG)");
		}
	}

	/** A client spoke plain HTTP to the TLS port ({@link PlainHttpOnTls}). */
	void plainHttp(SocketAddress remoteAddress) {
		this.failures.increment();
		this.log.log(() -> "Plain HTTP on the TLS port from " + remoteAddress + ": answered 400");
	}

	@Override
	public void recordDataReceived(SocketAddress remoteAddress, long bytes) {
	}

	@Override
	public void recordDataSent(SocketAddress remoteAddress, long bytes) {
	}

	@Override
	public void incrementErrorsCount(SocketAddress remoteAddress) {
	}

	@Override
	public void recordConnectTime(SocketAddress remoteAddress, Duration time, String status) {
	}

	@Override
	public void recordResolveAddressTime(SocketAddress remoteAddress, Duration time, String status) {
	}

}
