package io.quorumkv.service.http;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

import io.quorumkv.service.cluster.Topology;
import io.quorumkv.service.config.QuorumKvProperties;
import io.quorumkv.service.replication.InternalApi;
import io.quorumkv.service.replication.PeerClient;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.SslInfo;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.server.HandlerFilterFunction;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * Serves the internal routes only to other nodes: a caller proves it is one with the
 * cluster secret or, with mutual TLS ({@code quorumkv.cluster.tls.mutual}), with a node
 * certificate ({@link NodeCertificates}). No proof is a 401, a wrong secret a 403. It
 * filters the internal routes themselves, so every form of a path that WebFlux matches to
 * them (percent-encoded letters, matrix parameters) is checked; a form that matches no
 * route is a 404 and reaches nothing. The comparison takes constant time, and the secret
 * is never logged. A single node without a secret refuses every internal call.
 */
@Component
class InternalAuth implements HandlerFilterFunction<ServerResponse, ServerResponse> {

	private static final Log logger = LogFactory.getLog(InternalAuth.class);

	private final byte[] secret;

	private final @Nullable NodeCertificates nodeCertificates;

	private final PeerClient peers;

	InternalAuth(Topology topology, QuorumKvProperties properties, PeerClient peers,
			@Value("${server.ssl.client-auth:none}") String clientAuth) {
		this.peers = peers;
		this.secret = (topology.secret() != null) ? topology.secret().getBytes(StandardCharsets.UTF_8) : new byte[0];
		boolean mutual = properties.cluster().tls().mutual();
		if (mutual && "none".equalsIgnoreCase(clientAuth)) {
			throw new IllegalStateException("quorumkv.cluster.tls.mutual needs server.ssl.client-auth=want or need, "
					+ "so that peers can present their certificates");
		}
		this.nodeCertificates = mutual ? new NodeCertificates(topology) : null;
	}

	@Override
	public Mono<ServerResponse> filter(ServerRequest request, HandlerFunction<ServerResponse> next) {
		if (this.nodeCertificates != null && this.nodeCertificates.isNode(peerCertificates(request))) {
			return admitted(request, next);
		}
		String presented = request.headers().firstHeader(InternalApi.SECRET);
		if (presented == null) {
			return refuse(HttpStatus.UNAUTHORIZED, "internal API: missing " + InternalApi.SECRET
					+ ((this.nodeCertificates != null) ? " or a node certificate" : ""), request);
		}
		if (this.secret.length == 0
				|| !MessageDigest.isEqual(this.secret, presented.getBytes(StandardCharsets.UTF_8))) {
			return refuse(HttpStatus.FORBIDDEN, "internal API: wrong cluster secret", request);
		}
		return admitted(request, next);
	}

	/**
	 * Serves a node's call; the call itself shows that the node is up, which closes this
	 * node's circuit breaker toward it ({@link PeerClient#heardFrom}).
	 */
	private Mono<ServerResponse> admitted(ServerRequest request, HandlerFunction<ServerResponse> next) {
		String from = request.headers().firstHeader(InternalApi.FROM);
		if (from != null) {
			this.peers.heardFrom(from);
		}
		return next.handle(request);
	}

	private static java.security.cert.X509Certificate @Nullable [] peerCertificates(ServerRequest request) {
		SslInfo ssl = request.exchange().getRequest().getSslInfo();
		return (ssl != null) ? ssl.getPeerCertificates() : null;
	}

	private static Mono<ServerResponse> refuse(HttpStatus status, String reason, ServerRequest request) {
		logger.warn(reason + " from " + request.remoteAddress().map(Object::toString).orElse("?") + " for "
				+ request.method() + " " + request.path());
		return Mono.just(Reply.text(status, reason));
	}

}
