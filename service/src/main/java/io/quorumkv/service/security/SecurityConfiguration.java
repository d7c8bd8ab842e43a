package io.quorumkv.service.security;

import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.security.SecurityProperties.PublicApi;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.boot.security.autoconfigure.actuate.web.reactive.EndpointRequest;
import org.springframework.boot.web.server.Ssl;
import org.springframework.boot.web.server.autoconfigure.ServerProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.web.server.SecurityWebFiltersOrder;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.security.web.server.WebFilterChainProxy;
import org.springframework.security.web.server.authentication.AuthenticationWebFilter;
import org.springframework.security.web.server.context.NoOpServerSecurityContextRepository;
import org.springframework.security.web.server.savedrequest.NoOpServerRequestCache;

/**
 * Spring Security for WebFlux, built here rather than by Boot's auto-configuration
 * (excluded in {@code QuorumKvApplication}), and entered only through
 * {@link SecurityGate}.
 * <ul>
 * <li>Management endpoints: the links, health (status only: details need {@code admin}),
 * its liveness and readiness groups, {@code info}, {@code metrics} and {@code prometheus}
 * for anyone (the numbers Prometheus scrapes anyway); every other endpoint, the
 * {@code quorumkv} endpoint's views and actions included (flush, compact, and the
 * membership and repair operations that join it), needs an {@code admin} credential.</li>
 * <li>Public API with {@code quorumkv.security.public-api=authenticated}:
 * {@code GET /v0/status} for anyone, reads need {@code read-only}, {@code PUT} and
 * {@code DELETE} need {@code read-write}; any other path needs a credential.</li>
 * <li>No session, no CSRF token, no login page: a stateless API.</li>
 * </ul>
 */
@Configuration(proxyBeanMethods = false)
class SecurityConfiguration {

	@Bean
	SecurityGate securityGate(SecurityProperties security,
			@Value("${management.endpoints.web.base-path:/actuator}") String managementBasePath) {
		boolean publicApiProtected = security.publicApi() == PublicApi.AUTHENTICATED;
		WebFilterChainProxy proxy = new WebFilterChainProxy(chain(security, publicApiProtected));
		proxy.setExchangeRejectedHandler(TextReplies.rejectedRequest());
		return new SecurityGate(proxy, managementBasePath, publicApiProtected);
	}

	/** The startup line that says who may use the API (docs/security.md). */
	@Bean
	Exposure exposure(SecurityProperties security, ServerProperties server) {
		return new Exposure(server.getAddress(), Ssl.isEnabled(server.getSsl()), security.publicApi());
	}

	/**
	 * Failed TLS handshakes, counted and logged (at a rate limit); plain HTTP to the TLS
	 * port, counted with them and answered with a plain-HTTP 400 that says so.
	 */
	@Bean
	NettyServerCustomizer handshakeFailures(MeterRegistry meters) {
		HandshakeFailures failures = new HandshakeFailures(meters);
		return (server) -> PlainHttpOnTls.observe(failures.observe(server), failures::plainHttp);
	}

	static SecurityWebFilterChain chain(SecurityProperties security, boolean publicApiProtected) {
		Credentials credentials = new Credentials(security);
		AuthenticationWebFilter authentication = new AuthenticationWebFilter(credentials);
		authentication.setServerAuthenticationConverter(credentials);
		authentication.setAuthenticationFailureHandler(TextReplies.rejected());
		authentication.setSecurityContextRepository(NoOpServerSecurityContextRepository.getInstance());
		ServerHttpSecurity http = ServerHttpSecurity.http();
		http.csrf(ServerHttpSecurity.CsrfSpec::disable)
			.httpBasic(ServerHttpSecurity.HttpBasicSpec::disable)
			.formLogin(ServerHttpSecurity.FormLoginSpec::disable)
			.logout(ServerHttpSecurity.LogoutSpec::disable)
			.headers(ServerHttpSecurity.HeaderSpec::disable)
			.requestCache((cache) -> cache.requestCache(NoOpServerRequestCache.getInstance()))
			.securityContextRepository(NoOpServerSecurityContextRepository.getInstance())
			.addFilterAt(authentication, SecurityWebFiltersOrder.AUTHENTICATION)
			.exceptionHandling((exceptions) -> exceptions.authenticationEntryPoint(TextReplies.unauthenticated())
				.accessDeniedHandler(TextReplies.forbidden()))
			.authorizeExchange((exchanges) -> {
				exchanges
					.matchers(EndpointRequest.toLinks(), EndpointRequest.to("health", "info", "metrics", "prometheus"))
					.permitAll();
				exchanges.matchers(EndpointRequest.toAnyEndpoint()).hasRole("ADMIN");
				exchanges.pathMatchers("/internal/**").permitAll();
				if (publicApiProtected) {
					exchanges.pathMatchers(HttpMethod.GET, "/v0/status").permitAll();
					exchanges.pathMatchers(HttpMethod.GET, "/v0/entity", "/v0/entities", "/v0/openapi.yaml")
						.hasRole("READ");
					exchanges.pathMatchers(HttpMethod.PUT, "/v0/entity").hasRole("WRITE");
					exchanges.pathMatchers(HttpMethod.DELETE, "/v0/entity").hasRole("WRITE");
					exchanges.anyExchange().hasRole("READ");
				}
				else {
					exchanges.anyExchange().permitAll();
				}
			});
		return http.build();
	}

}
