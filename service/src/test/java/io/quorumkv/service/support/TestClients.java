package io.quorumkv.service.support;

import java.time.Duration;

import io.netty.handler.ssl.SslContext;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.test.web.reactive.server.WebTestClient;

/** Clients of a node under test on loopback. */
public final class TestClients {

	private TestClients() {
	}

	/**
	 * A client of the node on {@code port}: 30 s answer timeout, bodies up to 8 MB.
	 * <p>
	 * Every answer's body is read whole as it arrives and handed on as a heap copy: a
	 * test that only checks the status ({@code exchange().expectStatus()}) never reads
	 * the body, and WebTestClient then leaves the answer's Netty buffers unreleased
	 * (spring-projects/spring-framework#31335), which Netty reports as a leak when they
	 * are collected.
	 */
	public static WebTestClient forPort(int port) {
		return forUrl("http://127.0.0.1:" + port, null);
	}

	/**
	 * A client of the node at {@code baseUrl}, over TLS with {@code tls} for an
	 * {@code https://} URL; otherwise as {@link #forPort}.
	 */
	public static WebTestClient forUrl(String baseUrl, @Nullable SslContext tls) {
		WebTestClient.Builder builder = (tls != null)
				? WebTestClient.bindToServer(
						new ReactorClientHttpConnector(HttpClient.create().secure((spec) -> spec.sslContext(tls))))
				: WebTestClient.bindToServer();
		return builder.baseUrl(baseUrl)
			.responseTimeout(Duration.ofSeconds(30))
			.codecs((codecs) -> codecs.defaultCodecs().maxInMemorySize(8 << 20))
			.filter((request, next) -> next.exchange(request)
				.flatMap((response) -> response.bodyToMono(byte[].class)
					.map((body) -> response.mutate()
						.body(Flux.just(DefaultDataBufferFactory.sharedInstance.wrap(body)))
						.build())
					.switchIfEmpty(Mono.fromSupplier(() -> response.mutate().body(Flux.empty()).build()))))
			.build();
	}

}
