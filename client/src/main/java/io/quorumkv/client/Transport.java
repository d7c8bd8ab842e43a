package io.quorumkv.client;

import java.net.URI;
import java.time.Duration;
import java.util.function.BiConsumer;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.ssl.SslContextBuilder;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.Http11SslContextSpec;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.HttpClientResponse;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

/**
 * The client's one way to the nodes: one Reactor Netty {@link HttpClient} over one
 * {@link ConnectionProvider} (a bounded keep-alive pool per node, a bounded queue of
 * requests waiting for a connection) on event loops of its own, so that closing the
 * client frees everything it started and nothing it did not.
 *
 * <p>
 * Reactor Netty's own retry of a request whose pooled connection was found closed is
 * turned off: whether a request may be sent again is {@link Attempts}'s decision alone.
 * Chunks are kept whole ({@code allowPartialChunks(false)} up to the largest record),
 * which a format that splits records by chunk would need (the NDJSON format does not).
 */
final class Transport implements AutoCloseable {

	/** The ring epoch a node puts on its public answers (docs/api.md). */
	static final String EPOCH = "X-QuorumKV-Epoch";

	private static final byte[] EMPTY = new byte[0];

	private static final Duration CLOSE_WAIT = Duration.ofSeconds(5);

	private final LoopResources loops;

	private final ConnectionProvider provider;

	private final HttpClient http;

	/** Told each answer's {@link #EPOCH}, with the node that gave it. */
	private volatile @Nullable BiConsumer<URI, String> epochs;

	Transport(ClientConfig config) {
		this.loops = LoopResources.create("quorumkv-client", config.ioThreads(), true);
		this.provider = ConnectionProvider.builder("quorumkv-client")
			.maxConnections(config.maxConnectionsPerNode())
			.pendingAcquireMaxCount(config.pendingAcquireMaxCount())
			.pendingAcquireTimeout(config.connectTimeout().plus(config.responseTimeout()))
			.maxIdleTime(config.maxIdleTime())
			.evictInBackground(config.maxIdleTime())
			.build();
		HttpClient client = HttpClient.create(this.provider)
			.runOn(this.loops)
			.option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) config.connectTimeout().toMillis())
			.option(ChannelOption.TCP_NODELAY, true)
			.option(ChannelOption.SO_KEEPALIVE, true)
			.keepAlive(true)
			.disableRetry(true)
			.responseTimeout(config.responseTimeout())
			.httpResponseDecoder((spec) -> spec.maxChunkSize(config.maxRecordSize()).allowPartialChunks(false))
			.headers((headers) -> {
				headers.set(HttpHeaderNames.USER_AGENT, "quorumkv-java-client");
				if (config.credentials() instanceof Credentials.Bearer bearer) {
					headers.set(HttpHeaderNames.AUTHORIZATION, bearer.headerValue());
				}
			});
		if (config.https()) {
			TlsSettings tls = (config.tls() != null) ? config.tls() : TlsSettings.systemDefault();
			client = client.secure((spec) -> spec
				.sslContext(Http11SslContextSpec.forClient().configure((builder) -> configure(builder, tls))));
		}
		this.http = client;
	}

	private static void configure(SslContextBuilder builder, TlsSettings tls) {
		if (tls.trust() != null) {
			builder.trustManager(tls.trust());
		}
		if (tls.clientCertificate() != null) {
			builder.keyManager(tls.clientCertificate());
		}
	}

	/**
	 * From now on, {@code listener} is told the {@link #EPOCH} of every answer that has
	 * one, with the node that gave it, on the event loop that read it: it must not block.
	 */
	void onEpoch(BiConsumer<URI, String> listener) {
		this.epochs = listener;
	}

	private void observe(URI node, HttpClientResponse response) {
		BiConsumer<URI, String> listener = this.epochs;
		if (listener != null) {
			String epoch = response.responseHeaders().get(EPOCH);
			if (epoch != null) {
				listener.accept(node, epoch);
			}
		}
	}

	/**
	 * One request for a single entity: the node's answer, whatever its status; errors
	 * only when no answer came.
	 */
	Mono<Answer> exchange(HttpMethod method, URI node, String pathAndQuery, byte @Nullable [] body) {
		return exchange(method, node, pathAndQuery, body, null, null);
	}

	/**
	 * {@link #exchange(HttpMethod, URI, String, byte[])} with one more header (a
	 * condition: {@code If-Match}, {@code If-None-Match}) when {@code header} is given.
	 */
	Mono<Answer> exchange(HttpMethod method, URI node, String pathAndQuery, byte @Nullable [] body,
			@Nullable CharSequence header, @Nullable String headerValue) {
		HttpClient client = (header != null && headerValue != null)
				? this.http.headers((headers) -> headers.set(header, headerValue)) : this.http;
		HttpClient.RequestSender request = client.request(method).uri(node + pathAndQuery);
		HttpClient.ResponseReceiver<?> sending = (body != null)
				? request.send(Mono.fromSupplier(() -> Unpooled.wrappedBuffer(body))) : request;
		return sending.responseSingle((response, content) -> {
			observe(node, response);
			return content.asByteArray()
				.defaultIfEmpty(EMPTY)
				.map((bytes) -> new Answer(response.status().code(), bytes,
						response.responseHeaders().get(HttpHeaderNames.RETRY_AFTER),
						response.responseHeaders().get(HttpHeaderNames.ETAG)));
		});
	}

	/**
	 * A range request: its records as the format decodes them from a 200, or the error of
	 * another status.
	 */
	Flux<KeyValue> scan(URI node, String pathAndQuery, ScanFormat format) {
		String accept = format.accept();
		HttpClient client = (accept != null)
				? this.http.headers((headers) -> headers.set(HttpHeaderNames.ACCEPT, accept)) : this.http;
		return client.get().uri(node + pathAndQuery).response((response, content) -> {
			observe(node, response);
			int status = response.status().code();
			if (status == 200) {
				return format.decode(node, content);
			}
			return content.aggregate()
				.asByteArray()
				.defaultIfEmpty(EMPTY)
				.flatMapMany((bytes) -> Flux.error(Failures.forStatus(Operation.SCAN, node, status, bytes,
						response.responseHeaders().get(HttpHeaderNames.RETRY_AFTER))));
		});
	}

	@Override
	public void close() {
		this.provider.disposeLater().block(CLOSE_WAIT);
		this.loops.disposeLater(Duration.ZERO, CLOSE_WAIT).block(CLOSE_WAIT);
	}

}
