package io.quorumkv.service.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.cert.X509Certificate;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.Topology;
import io.quorumkv.service.config.QuorumKvProperties;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.SslInfo;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.function.server.HandlerFilterFunction;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * Serves the internal routes only to other nodes: a caller proves it is one with the
 * cluster secret ({@link #SECRET}) or, with mutual TLS
 * ({@code quorumkv.cluster.tls.mutual}), with a node certificate
 * ({@link NodeCertificates}). No proof is a 401, a wrong secret a 403. It filters the
 * internal routes themselves, so every form of a path that WebFlux matches to them
 * (percent-encoded letters, matrix parameters) is checked; a form that matches no route
 * is a 404 and reaches nothing. The comparison takes constant time, and the secret is
 * never logged. A single node without a secret refuses every internal call.
 */
@Component
public class InternalAuth implements HandlerFilterFunction<ServerResponse, ServerResponse> {

	/** The header that carries the cluster secret on every call between nodes. */
	public static final String SECRET = "X-QuorumKV-Secret";

	private static final Log logger = LogFactory.getLog(InternalAuth.class);

	private final byte[] secret;

	private final @Nullable NodeCertificates nodeCertificates;

	InternalAuth(Topology topology, ClusterState cluster, QuorumKvProperties properties,
			@Value("${server.ssl.client-auth:none}") String clientAuth) {
		this.secret = (topology.secret() != null) ? topology.secret().getBytes(StandardCharsets.UTF_8) : new byte[0];
		boolean mutual = properties.cluster().tls().mutual();
		if (mutual && "none".equalsIgnoreCase(clientAuth)) {
			throw new IllegalStateException("quorumkv.cluster.tls.mutual needs server.ssl.client-auth=want or need, "
					+ "so that peers can present their certificates");
		}
		@Nullable String configuredId = properties.cluster().id();
		this.nodeCertificates = mutual
				? new NodeCertificates(() -> cluster.ring().map(Ring::clusterId).orElse(configuredId)) : null;
	}

	@Override
	public Mono<ServerResponse> filter(ServerRequest request, HandlerFunction<ServerResponse> next) {
		if (this.nodeCertificates != null && this.nodeCertificates.isNode(peerCertificates(request))) {
			return next.handle(request);
		}
		String presented = request.headers().firstHeader(SECRET);
		if (presented == null) {
			return refuse(HttpStatus.UNAUTHORIZED, "internal API: missing " + SECRET
					+ ((this.nodeCertificates != null) ? " or a node certificate" : ""), request);
		}
		if (this.secret.length == 0
				|| !MessageDigest.isEqual(this.secret, presented.getBytes(StandardCharsets.UTF_8))) {
			return refuse(HttpStatus.FORBIDDEN, "internal API: wrong cluster secret", request);
		}
		return next.handle(request);
	}

	private static X509Certificate @Nullable [] peerCertificates(ServerRequest request) {
		SslInfo ssl = request.exchange().getRequest().getSslInfo();
		return (ssl != null) ? ssl.getPeerCertificates() : null;
	}

	private static Mono<ServerResponse> refuse(HttpStatus status, String reason, ServerRequest request) {
		logger.warn(reason + " from " + request.remoteAddress().map(Object::toString).orElse("?") + " for "
				+ request.method() + " " + request.path());
		return ServerResponse.status(status).contentType(MediaType.TEXT_PLAIN).bodyValue(reason + "\n");
	}

}
