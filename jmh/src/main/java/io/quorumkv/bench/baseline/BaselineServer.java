package io.quorumkv.bench.baseline;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * A bare Reactor Netty server (no Spring, no storage, no replication) serving
 * {@code GET/PUT/DELETE /v0/entity?id=} from an in-memory map: the limit of the HTTP
 * stack QuorumKV runs on, against which the node's throughput and latency are compared in
 * one run (docs/performance.md).
 *
 * <pre>
 * java -cp jmh/target/benchmarks.jar io.quorumkv.bench.baseline.BaselineServer 18090
 * </pre>
 */
public final class BaselineServer {

	private final ConcurrentMap<String, byte[]> data = new ConcurrentHashMap<>();

	BaselineServer() {
	}

	public static void main(String[] args) {
		int port = (args.length > 0) ? Integer.parseInt(args[0]) : 18090;
		DisposableServer server = new BaselineServer().start(port);
		System.out.println("baseline server on http://127.0.0.1:" + server.port());
		server.onDispose().block();
	}

	/** Starts the server on 127.0.0.1 ({@code port} 0 picks a free one). */
	public DisposableServer start(int port) {
		return HttpServer.create()
			.host("127.0.0.1")
			.port(port)
			.idleTimeout(Duration.ofSeconds(60))
			.route((routes) -> routes.get("/v0/status", (request, response) -> response.sendString(Mono.just("OK")))
				.get("/v0/entity", this::get)
				.put("/v0/entity", this::put)
				.delete("/v0/entity", this::delete))
			.bindNow();
	}

	private Mono<Void> get(HttpServerRequest request, HttpServerResponse response) {
		String id = id(request);
		if (id == null) {
			return response.status(HttpResponseStatus.BAD_REQUEST).send();
		}
		byte[] value = this.data.get(id);
		if (value == null) {
			return response.status(HttpResponseStatus.NOT_FOUND).send();
		}
		return response.header("Content-Type", "application/octet-stream")
			.sendObject(Mono.just(Unpooled.wrappedBuffer(value)))
			.then();
	}

	private Mono<Void> put(HttpServerRequest request, HttpServerResponse response) {
		String id = id(request);
		if (id == null) {
			return response.status(HttpResponseStatus.BAD_REQUEST).send();
		}
		return request.receive().aggregate().map(BaselineServer::bytes).defaultIfEmpty(new byte[0]).flatMap((value) -> {
			this.data.put(id, value);
			return response.status(HttpResponseStatus.CREATED).send();
		});
	}

	private Mono<Void> delete(HttpServerRequest request, HttpServerResponse response) {
		String id = id(request);
		if (id == null) {
			return response.status(HttpResponseStatus.BAD_REQUEST).send();
		}
		this.data.remove(id);
		return response.status(HttpResponseStatus.ACCEPTED).send();
	}

	private static @Nullable String id(HttpServerRequest request) {
		var values = new QueryStringDecoder(request.uri()).parameters().get("id");
		return (values == null || values.isEmpty() || values.getFirst().isEmpty()) ? null : values.getFirst();
	}

	private static byte[] bytes(ByteBuf buffer) {
		return ByteBufUtil.getBytes(buffer);
	}

}
