package io.quorumkv.bench.baseline;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import reactor.core.publisher.Mono;
import reactor.netty.ReactorNetty;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * A bare Spring WebFlux server (Spring Boot, one functional endpoint, no storage, no
 * replication) serving {@code GET/PUT/DELETE /v0/entity?id=} from an in-memory map: the
 * limit of the framework the node is built on, as the node uses it (Spring Boot's
 * auto-configured WebFlux on Reactor Netty, one event loop per core). The node's
 * throughput and latency are compared with it in one run (docs/performance.md,
 * {@code scripts/perf-goals.sh}).
 *
 * <pre>
 * java -cp jmh/target/benchmarks.jar io.quorumkv.bench.baseline.WebFluxBaselineServer 18091
 * </pre>
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
public class WebFluxBaselineServer {

	private final ConcurrentMap<String, byte[]> data = new ConcurrentHashMap<>();

	public static void main(String[] args) {
		String port = (args.length > 0) ? args[0] : "18091";
		if (System.getProperty(ReactorNetty.IO_WORKER_COUNT) == null) {
			System.setProperty(ReactorNetty.IO_WORKER_COUNT,
					Integer.toString(Runtime.getRuntime().availableProcessors()));
		}
		SpringApplication application = new SpringApplication(WebFluxBaselineServer.class);
		// No application.yml of its own, and not the node's (also on this class path).
		application.setDefaultProperties(Map.of("spring.config.name", "webflux-baseline", "server.port", port,
				"server.address", "127.0.0.1", "spring.main.banner-mode", "off"));
		application.run();
		System.out.println("webflux baseline server on http://127.0.0.1:" + port);
	}

	@Bean
	RouterFunction<ServerResponse> entityRoutes() {
		return RouterFunctions.route()
			.GET("/v0/status", (request) -> ServerResponse.ok().bodyValue("OK"))
			.GET("/v0/entity", this::get)
			.PUT("/v0/entity", this::put)
			.DELETE("/v0/entity", this::delete)
			.build();
	}

	private Mono<ServerResponse> get(ServerRequest request) {
		return request.queryParam("id").map((id) -> {
			byte[] value = this.data.get(id);
			return (value != null)
					? ServerResponse.ok().contentType(MediaType.APPLICATION_OCTET_STREAM).bodyValue(value)
					: ServerResponse.notFound().build();
		}).orElseGet(() -> ServerResponse.badRequest().build());
	}

	private Mono<ServerResponse> put(ServerRequest request) {
		return request.queryParam("id")
			.map((id) -> request.bodyToMono(byte[].class).defaultIfEmpty(new byte[0]).flatMap((value) -> {
				this.data.put(id, value);
				return ServerResponse.status(HttpStatus.CREATED).build();
			}))
			.orElseGet(() -> ServerResponse.badRequest().build());
	}

	private Mono<ServerResponse> delete(ServerRequest request) {
		return request.queryParam("id").map((id) -> {
			this.data.remove(id);
			return ServerResponse.accepted().build();
		}).orElseGet(() -> ServerResponse.badRequest().build());
	}

}
