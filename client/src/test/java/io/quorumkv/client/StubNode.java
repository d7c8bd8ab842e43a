package io.quorumkv.client;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.QueryStringDecoder;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * A one-node stand-in for the client's tests of versions, on a free loopback port: the
 * single-entity API of {@code docs/api.md} over a map that applies every request
 * atomically (one lock), with versions ({@code ETag}s) and the conditions
 * {@code If-Match: "<version>"} and {@code If-None-Match: *} on writes: 201/202 when the
 * condition holds, 412 with the current {@code ETag} when not. It also plays the nodes
 * conditional writes are not possible with: one answering 501, one whose key another
 * writer changes after every read, one that never answers a conditional write. A read
 * with {@code consistency=serial} is counted and answered as any read (this node applies
 * every request atomically, so each read is serial).
 */
public final class StubNode implements AutoCloseable {

	/** How the node treats requests. */
	public enum Mode {

		/** Conditions enforced. */
		VERSIONED,
		/** A conditional write answers 501 and is not applied. */
		UNSUPPORTED,
		/**
		 * As {@link #VERSIONED}, but every read is followed by another writer's write.
		 */
		CONTENDED,
		/** A conditional write is never answered (nor applied). */
		SILENT

	}

	private record Stored(byte[] value, long version) {

	}

	private record Reply(int status, byte[] body, @Nullable String etag) {

	}

	private final Mode mode;

	private final DisposableServer server;

	private final Map<String, Stored> entries = new HashMap<>();

	private final AtomicInteger conditionalWrites = new AtomicInteger();

	private final AtomicInteger plainWrites = new AtomicInteger();

	private final AtomicInteger serialReads = new AtomicInteger();

	private long lastVersion = 0x5f3a2c1b9d0e4L;

	private StubNode(Mode mode) {
		this.mode = mode;
		this.server = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.handle(this::handle)
			.bindNow(Duration.ofSeconds(10));
	}

	/** A node on a free loopback port. */
	public static StubNode start(Mode mode) {
		return new StubNode(mode);
	}

	public URI url() {
		return URI.create("http://127.0.0.1:" + this.server.port());
	}

	/**
	 * Writes with {@code If-Match} or {@code If-None-Match} received (applied or not).
	 */
	public int conditionalWrites() {
		return this.conditionalWrites.get();
	}

	/** Writes without a condition received. */
	public int plainWrites() {
		return this.plainWrites.get();
	}

	/** Reads with {@code consistency=serial} received. */
	public int serialReads() {
		return this.serialReads.get();
	}

	/** The value stored under {@code key}. */
	public synchronized Optional<byte[]> value(String key) {
		Stored stored = this.entries.get(key);
		return (stored != null) ? Optional.of(stored.value().clone()) : Optional.empty();
	}

	private Mono<Void> handle(HttpServerRequest request, HttpServerResponse response) {
		QueryStringDecoder query = new QueryStringDecoder(request.uri(), StandardCharsets.UTF_8);
		List<String> ids = query.parameters().get("id");
		if (!query.path().equals("/v0/entity") || ids == null || ids.size() != 1) {
			return response.status(400).sendString(Mono.just("not a single entity")).then();
		}
		String key = ids.get(0);
		List<String> consistency = query.parameters().get("consistency");
		if (consistency != null) {
			if (!consistency.equals(List.of("serial")) || !request.method().equals(HttpMethod.GET)
					|| query.parameters().containsKey("replicas")) {
				return response.status(400).sendString(Mono.just("consistency must be serial, on a read")).then();
			}
			this.serialReads.incrementAndGet();
		}
		String ifMatch = request.requestHeaders().get(HttpHeaderNames.IF_MATCH);
		String ifNoneMatch = request.requestHeaders().get(HttpHeaderNames.IF_NONE_MATCH);
		boolean conditionalWrite = !request.method().equals(HttpMethod.GET) && (ifMatch != null || ifNoneMatch != null);
		if (conditionalWrite && this.mode == Mode.SILENT) {
			this.conditionalWrites.incrementAndGet();
			return Mono.never();
		}
		return request.receive().aggregate().asByteArray().defaultIfEmpty(new byte[0]).flatMap((body) -> {
			Reply reply = apply(request.method(), key, ifMatch, ifNoneMatch, body);
			HttpServerResponse answer = response.status(reply.status());
			if (reply.etag() != null) {
				answer.header(HttpHeaderNames.ETAG, reply.etag());
			}
			return answer.sendByteArray(Mono.just(reply.body())).then();
		});
	}

	private synchronized Reply apply(HttpMethod method, String key, @Nullable String ifMatch,
			@Nullable String ifNoneMatch, byte[] body) {
		Stored current = this.entries.get(key);
		if (method.equals(HttpMethod.GET)) {
			if (current == null) {
				return new Reply(404, new byte[0], null);
			}
			if (this.mode == Mode.CONTENDED) {
				this.entries.put(key, new Stored(current.value(), ++this.lastVersion));
			}
			return new Reply(200, current.value(), etag(current.version()));
		}
		boolean conditional = ifMatch != null || ifNoneMatch != null;
		(conditional ? this.conditionalWrites : this.plainWrites).incrementAndGet();
		if (conditional && this.mode == Mode.UNSUPPORTED) {
			return new Reply(501, "conditional writes are not supported yet; the write was not applied"
				.getBytes(StandardCharsets.UTF_8), null);
		}
		String currentTag = (current != null) ? etag(current.version()) : null;
		boolean failed = (ifMatch != null && !ifMatch.equals(currentTag))
				|| ("*".equals(ifNoneMatch) && current != null);
		if (failed) {
			return new Reply(412, new byte[0], currentTag);
		}
		if (method.equals(HttpMethod.PUT)) {
			long version = ++this.lastVersion;
			this.entries.put(key, new Stored(body, version));
			return new Reply(201, new byte[0], etag(version));
		}
		if (method.equals(HttpMethod.DELETE)) {
			this.entries.remove(key);
			return new Reply(202, new byte[0], null);
		}
		return new Reply(405, new byte[0], null);
	}

	private static String etag(long version) {
		return "\"" + Long.toHexString(version) + "\"";
	}

	@Override
	public void close() {
		this.server.disposeNow(Duration.ofSeconds(10));
	}

}
