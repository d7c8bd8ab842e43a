package io.quorumkv.service.http;

import static io.quorumkv.service.http.InternalParameters.only;
import static org.springframework.web.reactive.function.server.RequestPredicates.path;

import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.compression.Zstd;
import io.quorumkv.service.config.HttpProperties;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.peer.ReplicaStreams;
import io.quorumkv.service.security.InternalAuth;

import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The node's one front door: the functional routes of the public API
 * ({@link EntityHandler}) and of the internal API ({@link InternalHandler}), served by
 * Spring WebFlux on Reactor Netty like everything else the node answers.
 * <ul>
 * <li>The public routes pass through {@link InFlightLimiter} (a bounded number of
 * requests at once, 503 past it).</li>
 * <li>The internal routes pass through {@link InternalAuth}: whatever form of a path
 * matches them (percent-encoded, with matrix parameters), the secret is checked, because
 * the check is a filter of the routes themselves, not of a path prefix. Their answers
 * carry this node's wall clock ({@link ClockHeader}).</li>
 * <li>The internal data and repair routes then pass through {@link RingGate}: a call from
 * another cluster or from an older ring is refused, one from a newer ring waits until
 * this node has caught up.</li>
 * <li>Read and idle timeouts are Reactor Netty's own settings of the server.</li>
 * </ul>
 */
@Configuration(proxyBeanMethods = false)
class HttpConfiguration {

	/**
	 * Netty's HTTP content decoder asks, on the first message it decodes, whether zstd is
	 * available; with zstd-jni on the class path (the LSM's block codec) the first answer
	 * loads zstd-jni's native library out of its jar, blocking reads that an event loop
	 * must not do (EventLoopBlockingTest caught it). Asked once here, while the context
	 * starts on the main thread, before the server accepts a connection.
	 */
	HttpConfiguration() {
		Zstd.isAvailable();
	}

	@Bean
	RouterFunction<ServerResponse> publicApi(EntityHandler handler, RingHandler ring, InFlightLimiter limiter) {
		return RouterFunctions.route()
			.GET(EntityHandler.STATUS_PATH, handler::status)
			.GET(RingHandler.PUBLIC_PATH, (request) -> handler.withoutParameters(request, ring::publicRing))
			.GET(EntityHandler.ENTITY_PATH, handler::get)
			.HEAD(EntityHandler.ENTITY_PATH, handler::head)
			.PUT(EntityHandler.ENTITY_PATH, handler::put)
			.DELETE(EntityHandler.ENTITY_PATH, handler::delete)
			.GET(EntityHandler.ENTITIES_PATH, handler::range)
			.GET(EntityHandler.OPENAPI_PATH, (request) -> handler.withoutParameters(request, handler::openApi))
			.route(path(EntityHandler.ENTITY_PATH).or(path(EntityHandler.ENTITIES_PATH))
				.or(path(EntityHandler.STATUS_PATH))
				.or(path(RingHandler.PUBLIC_PATH))
				.or(path(EntityHandler.OPENAPI_PATH)), handler::methodNotAllowed)
			.filter(limiter)
			.build();
	}

	@Bean
	RouterFunction<ServerResponse> internalApi(InternalHandler handler, ReplicaStreamHandler streams,
			TransferHandler transfers, RepairHandler repair, InternalAuth auth, HeardFrom heard, RingGate gate,
			ClockHeader clock) {
		return RouterFunctions.route()
			.POST(ReplicaStreams.PATH, only(streams::stream))
			.GET(InternalApi.TRANSFER_PATH, only(transfers::transfer, "change", "start", "rate", "for"))
			.GET(InternalApi.ENTRIES_PATH, only(handler::scan, "start", "end", "limit"))
			.POST(InternalApi.REPAIR_TREES_PATH, only(repair::trees, "scope"))
			.POST(InternalApi.REPAIR_NODES_PATH, only(repair::nodes))
			.POST(InternalApi.REPAIR_DIGESTS_PATH, only(repair::digests))
			.POST(InternalApi.REPAIR_DONE_PATH, only(repair::done, "scope"))
			.DELETE(InternalApi.REPAIR_SESSION_PATH, only(repair::end, "id"))
			// The first filter added runs first: the clock header (on every answer), the
			// secret, the caller is up, then the ring.
			.filter(clock)
			.filter(auth)
			.filter(heard)
			.filter(gate)
			.build();
	}

	/**
	 * The ring protocol: how peers catch up, and the metadata log's Raft calls. Checked
	 * for the secret like the data routes, not for the caller's epoch: it is how a node
	 * behind learns the newer ring.
	 */
	@Bean
	RouterFunction<ServerResponse> ringProtocol(RingHandler ring, RingProtocolHandler protocol,
			TransferHandler transfers, InternalAuth auth, HeardFrom heard, ClockHeader clock) {
		return RouterFunctions.route()
			.GET(InternalApi.RING_PATH, only(ring::internalRing))
			.GET(InternalApi.TRANSFERS_PATH, only(transfers::transfers))
			.GET(InternalApi.CLEANUP_PATH, only(transfers::cleanup))
			.GET(InternalApi.RING_IDENTITY_PATH, only(protocol::identity))
			.POST(InternalApi.RING_JOIN_PATH, only(protocol::join, "url"))
			.POST(InternalApi.RAFT_PATH + "/{kind}", only(protocol::raft))
			.filter(clock)
			.filter(auth)
			.filter(heard)
			.build();
	}

	@Bean
	InFlightLimiter inFlightLimiter(HttpProperties http, MeterRegistry meters) {
		return new InFlightLimiter(http.maxInFlight(), meters);
	}

	@Bean
	BodyBudget bodyBudget(HttpProperties http, MeterRegistry meters) {
		return new BodyBudget(http.maxBufferedBodies().toBytes(), meters);
	}

	/**
	 * {@code quorumkv.http.read-timeout}: a request whose body stops arriving for that
	 * long is answered 408 and its connection closed (Reactor Netty's read timeout);
	 * {@code quorumkv.http.idle-timeout}: a connection waiting for its next request is
	 * closed after that long (Reactor Netty's idle timeout). A client may half-close its
	 * side after its request ({@code ALLOW_HALF_CLOSURE}): the connection stays open for
	 * the answer, which a write may give at the end of the event loop's turn
	 * ({@code LocalWrites}), after the end of input has been read; it closes when the
	 * idle timeout ends it (a request cut short by the half-close waits out the read
	 * timeout). The error Netty's epoll transport raises after such an answer is counted,
	 * not logged ({@link HalfClosedReads}).
	 */
	@Bean
	HalfClosedReads halfClosedReads(MeterRegistry meters) {
		return HalfClosedReads.install(meters);
	}

	@Bean
	NettyServerCustomizer connectionTimeouts(HttpProperties http) {
		return (server) -> server.readTimeout(http.readTimeout())
			.idleTimeout(http.idleTimeout())
			.childOption(ChannelOption.ALLOW_HALF_CLOSURE, true)
			.mapHandle(UnwrittenErrors::complete);
	}

}
