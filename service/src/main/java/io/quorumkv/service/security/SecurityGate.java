package io.quorumkv.service.security;

import java.util.List;

import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.http.server.PathContainer;
import org.springframework.security.web.server.WebFilterChainProxy;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * The one place a request enters Spring Security, and only when it asks for something
 * protected: the management endpoints always, the public API only when clients must
 * authenticate ({@code quorumkv.security.public-api=authenticated}), the internal API
 * never (it checks its callers itself: the cluster secret or a node certificate). With
 * the public API open, a public request costs one comparison of its first path segment
 * here and nothing of Spring Security.
 * <p>
 * The segment compared is the decoded one WebFlux matches routes and endpoints with
 * (percent-encoding and matrix parameters removed), so no spelling of a management path
 * slips past the gate to reach an endpoint.
 */
final class SecurityGate implements WebFilter, Ordered {

	/** Where Spring Security's own filter chain proxy would be ordered. */
	static final int ORDER = -100;

	private static final String INTERNAL = "internal";

	private final WebFilterChainProxy security;

	private final List<String> management;

	private final boolean publicApiProtected;

	/**
	 * @param security the filter chains
	 * @param managementBasePath Actuator's base path, {@code /actuator} by default
	 * @param publicApiProtected whether public requests pass Spring Security too
	 */
	SecurityGate(WebFilterChainProxy security, String managementBasePath, boolean publicApiProtected) {
		this.security = security;
		this.management = PathContainer.parsePath(managementBasePath)
			.elements()
			.stream()
			.filter(PathContainer.PathSegment.class::isInstance)
			.map((segment) -> ((PathContainer.PathSegment) segment).valueToMatch())
			.toList();
		// With Actuator at the root of its port ("/"), no path tells a management request
		// from a public one: every request passes Spring Security then.
		this.publicApiProtected = publicApiProtected || this.management.isEmpty();
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		return protects(exchange.getRequest().getPath().pathWithinApplication()) ? this.security.filter(exchange, chain)
				: chain.filter(exchange);
	}

	boolean protects(PathContainer path) {
		List<PathContainer.Element> elements = path.elements();
		int matched = 0;
		String first = null;
		for (PathContainer.Element element : elements) {
			if (element instanceof PathContainer.PathSegment segment) {
				String value = segment.valueToMatch();
				if (first == null) {
					first = value;
				}
				if (matched < this.management.size() && value.equals(this.management.get(matched))) {
					matched++;
				}
				else {
					break;
				}
			}
		}
		if (matched == this.management.size() && !this.management.isEmpty()) {
			return true;
		}
		return this.publicApiProtected && !INTERNAL.equals(first);
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

}
