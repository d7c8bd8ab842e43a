package io.quorumkv.service.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.cert.X509Certificate;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.ClusterProperties;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.Topology;
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
 * ({@code quorumkv.cluster.tls.mutual}), with a node certificate of this cluster
 * ({@link NodeCertificates}: a subject alternative name
 * {@code spiffe://<cluster-id>/node/<name>}). No proof is a 401, a wrong secret a 403. It
 * filters the internal routes themselves, so every form of a path that WebFlux matches to
 * them (percent-encoded letters, matrix parameters) is checked; a form that matches no
 * route is a 404 and reaches nothing. The comparison takes constant time, and the secret
 * is never logged. A single node configured without a secret has one made for its own
 * calls (ClusterConfiguration) and refuses every other caller.
 * <p>
 * Every refusal counts in {@value #METER}, tagged with its {@link Refusal reason}; the
 * log gets a line per reason at most every {@link RateLimitedLog#INTERVAL}, so that a
 * scan of the internal API does not flood it.
 */
@Component
public class InternalAuth implements HandlerFilterFunction<ServerResponse, ServerResponse> {

	/** The header that carries the cluster secret on every call between nodes. */
	public static final String SECRET = "X-QuorumKV-Secret";

	/** Counter of refused internal calls, tagged {@code reason}. */
	static final String METER = "quorumkv.internal.refused";

	private static final Log logger = LogFactory.getLog(InternalAuth.class);

	/** Why an internal call was refused: the {@code reason} tag of {@value #METER}. */
	enum Refusal {

		/** Neither a secret nor a certificate. */
		NO_PROOF,

		/** A certificate that names no node of this cluster, and no secret. */
		NOT_A_NODE,

		/** A secret that is not the cluster's (or the node has none). */
		WRONG_SECRET;

		String tag() {
			return name().toLowerCase(Locale.ROOT).replace('_', '-');
		}

	}

	private final byte[] secret;

	private final @Nullable NodeCertificates nodeCertificates;

	private final Map<Refusal, Counter> refused = new EnumMap<>(Refusal.class);

	private final Map<Refusal, RateLimitedLog> logs = new EnumMap<>(Refusal.class);

	InternalAuth(Topology topology, ClusterState cluster, ClusterProperties settings, MeterRegistry meters,
			@Value("${server.ssl.client-auth:none}") String clientAuth) {
		this.secret = (topology.secret() != null) ? topology.secret().getBytes(StandardCharsets.UTF_8) : new byte[0];
		boolean mutual = settings.tls().mutual();
		if (mutual && "none".equalsIgnoreCase(clientAuth)) {
			throw new IllegalStateException("quorumkv.cluster.tls.mutual needs server.ssl.client-auth=want or need, "
					+ "so that peers can present their certificates");
		}
		@Nullable String configuredId = settings.id();
		this.nodeCertificates = mutual
				? new NodeCertificates(() -> cluster.ring().map(Ring::clusterId).orElse(configuredId)) : null;
		if (mutual) {
			String id = cluster.ring().map(Ring::clusterId).orElse(configuredId);
			logger.info((id != null)
					? "Mutual TLS: a node certificate names spiffe://" + id
							+ "/node/<name> in its subject alternative names"
					: "Mutual TLS: this node has no cluster id yet (no ring, no quorumkv.cluster.id), so no "
							+ "certificate proves a node until it has one; the cluster secret still does");
		}
		for (Refusal refusal : Refusal.values()) {
			this.refused.put(refusal,
					Counter.builder(METER)
						.description("Calls to the internal API refused for want of a node's proof")
						.tag("reason", refusal.tag())
						.register(meters));
			this.logs.put(refusal, new RateLimitedLog(logger::warn));
		}
	}

	@Override
	public Mono<ServerResponse> filter(ServerRequest request, HandlerFunction<ServerResponse> next) {
		X509Certificate[] certificates = peerCertificates(request);
		if (this.nodeCertificates != null && this.nodeCertificates.isNode(certificates)) {
			return next.handle(request);
		}
		String presented = request.headers().firstHeader(SECRET);
		if (presented == null) {
			boolean certificate = certificates != null && certificates.length > 0;
			return refuse(HttpStatus.UNAUTHORIZED, certificate ? Refusal.NOT_A_NODE : Refusal.NO_PROOF,
					"internal API: missing " + SECRET
							+ ((this.nodeCertificates != null) ? " or a node certificate" : ""),
					request);
		}
		if (this.secret.length == 0
				|| !MessageDigest.isEqual(this.secret, presented.getBytes(StandardCharsets.UTF_8))) {
			return refuse(HttpStatus.FORBIDDEN, Refusal.WRONG_SECRET, "internal API: wrong cluster secret", request);
		}
		return next.handle(request);
	}

	private static X509Certificate @Nullable [] peerCertificates(ServerRequest request) {
		SslInfo ssl = request.exchange().getRequest().getSslInfo();
		return (ssl != null) ? ssl.getPeerCertificates() : null;
	}

	private Mono<ServerResponse> refuse(HttpStatus status, Refusal refusal, String text, ServerRequest request) {
		this.refused.get(refusal).increment();
		this.logs.get(refusal)
			.log(() -> text + " (" + refusal.tag() + ") from "
					+ request.remoteAddress().map(Object::toString).orElse("?") + " for " + request.method() + " "
					+ request.path());
		return ServerResponse.status(status).contentType(MediaType.TEXT_PLAIN).bodyValue(text + "\n");
	}

}
