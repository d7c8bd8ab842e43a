package io.quorumkv.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.timeout.ReadTimeoutException;
import io.netty.util.ReferenceCountUtil;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.http.HttpStatus;

/**
 * {@link EntityChannelHandler} on an embedded channel: which requests it takes, that
 * every answer on a connection goes out in the order of its requests whichever layer
 * makes it, and that a connection's reading, body budget and close are handled around an
 * answer still being made. The handler after it stands for Reactor Netty: it records what
 * it is handed and answers when told to.
 */
class EntityChannelHandlerTest {

	private static final int MAX_BODY = 64;

	private final BodyBudget bodies = new BodyBudget(100, new SimpleMeterRegistry());

	/** The requests the handler asked answers for, with their pending answers. */
	private final List<Asked> asked = new ArrayList<>();

	/** What the handler handed on to "Reactor Netty". */
	private final List<Object> passedOn = new ArrayList<>();

	/** Whether answers are made at once (201 or the value) or left pending. */
	private boolean immediate = true;

	/** When set, every request is answered this before its body is read. */
	private @Nullable Reply refusal;

	/** The reads asked of the connection. */
	private final AtomicInteger reads = new AtomicInteger();

	private final EmbeddedChannel channel = new EmbeddedChannel(new ChannelOutboundHandlerAdapter() {
		@Override
		public void read(ChannelHandlerContext ctx) throws Exception {
			EntityChannelHandlerTest.this.reads.incrementAndGet();
			super.read(ctx);
		}
	}, new EntityChannelHandler(this::answer, this.bodies, MAX_BODY), new ChannelInboundHandlerAdapter() {
		@Override
		public void channelRead(ChannelHandlerContext ctx, Object msg) {
			EntityChannelHandlerTest.this.passedOn.add(msg);
		}
	});

	record Asked(HttpMethod method, String uri, long contentLength, byte[] body, Sinks.One<Reply> reply,
			AtomicBoolean cancelled) {
	}

	private Mono<Reply> answer(HttpMethod method, String uri, long contentLength, RequestBody body) {
		if (this.refusal != null) {
			return Mono.just(this.refusal); // at once, not waiting for the body
		}
		return body.read(MAX_BODY, (bytes) -> {
			Sinks.One<Reply> sink = Sinks.one();
			AtomicBoolean cancelled = new AtomicBoolean();
			this.asked.add(new Asked(method, uri, contentLength, bytes, sink, cancelled));
			if (this.immediate) {
				return Mono.just(HttpMethod.GET.equals(method) ? Reply.binary(bytes) : Reply.CREATED);
			}
			return sink.asMono().doOnCancel(() -> cancelled.set(true));
		});
	}

	@AfterEach
	void release() {
		this.passedOn.forEach(ReferenceCountUtil::release);
		this.channel.finishAndReleaseAll();
	}

	@Test
	void takesAPlainPutAndAnswersItWithoutReactorNetty() {
		put("/v0/entity?id=a", "abc");
		assertThat(this.asked).singleElement().satisfies((asked) -> {
			assertThat(asked.method()).isEqualTo(HttpMethod.PUT);
			assertThat(asked.uri()).isEqualTo("/v0/entity?id=a");
			assertThat(asked.contentLength()).isEqualTo(3);
			assertThat(new String(asked.body(), StandardCharsets.UTF_8)).isEqualTo("abc");
		});
		assertThat(status(response())).isEqualTo(201);
		assertThat(this.passedOn).isEmpty();
		assertThat(this.bodies.used()).isZero();
	}

	@Test
	void aBodyInSeveralPartsIsJoined() {
		HttpRequest head = request(HttpMethod.PUT, "/v0/entity?id=a");
		head.headers().set(HttpHeaderNames.CONTENT_LENGTH, 6);
		this.channel.writeInbound(head, new DefaultHttpContent(ascii("abc")), new DefaultLastHttpContent(ascii("def")));
		assertThat(new String(this.asked.get(0).body(), StandardCharsets.UTF_8)).isEqualTo("abcdef");
		assertThat(status(response())).isEqualTo(201);
	}

	@Test
	void getAndDeleteWithoutABodyAreTaken() {
		send(request(HttpMethod.GET, "/v0/entity?id=a"));
		send(request(HttpMethod.DELETE, "/v0/entity"));
		assertThat(this.asked).extracting(Asked::method).containsExactly(HttpMethod.GET, HttpMethod.DELETE);
		assertThat(this.asked).extracting(Asked::contentLength).containsExactly(-1L, -1L);
		assertThat(this.passedOn).isEmpty();
	}

	@Test
	void everyOtherRequestIsLeftToReactorNetty() {
		List<HttpRequest> others = new ArrayList<>();
		others.add(request(HttpMethod.GET, "/v0/status"));
		others.add(request(HttpMethod.POST, "/v0/entity?id=a"));
		others.add(request(HttpMethod.GET, "/v0/entity#f"));
		others.add(request(HttpMethod.GET, "/v0/entityx"));
		HttpRequest chunked = request(HttpMethod.PUT, "/v0/entity?id=a");
		chunked.headers().set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
		others.add(chunked);
		HttpRequest expect = withLength(request(HttpMethod.PUT, "/v0/entity?id=a"), 1);
		expect.headers().set(HttpHeaderNames.EXPECT, HttpHeaderValues.CONTINUE);
		others.add(expect);
		others.add(new DefaultHttpRequest(HttpVersion.HTTP_1_0, HttpMethod.GET, "/v0/entity?id=a"));
		HttpRequest close = request(HttpMethod.GET, "/v0/entity?id=a");
		close.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
		others.add(close);
		HttpRequest upgrade = request(HttpMethod.GET, "/v0/entity?id=a");
		upgrade.headers().set(HttpHeaderNames.UPGRADE, "h2c");
		others.add(upgrade);
		others.add(withLength(request(HttpMethod.PUT, "/v0/entity?id=a"), MAX_BODY + 1));
		others.add(withLength(request(HttpMethod.GET, "/v0/entity?id=a"), 1));
		HttpRequest malformed = request(HttpMethod.GET, "/v0/entity?id=a");
		malformed.setDecoderResult(DecoderResult.failure(new IllegalArgumentException("bad header")));
		others.add(malformed);
		for (HttpRequest other : others) {
			this.channel.writeInbound(other, new DefaultLastHttpContent());
			answerAsReactorNetty();
		}
		assertThat(this.asked).isEmpty();
		assertThat(this.passedOn).hasSize(2 * others.size());
		assertThat(this.channel.outboundMessages()).hasSize(others.size());
	}

	@Test
	void aRequestBehindOneOfReactorNettysWaitsForItsAnswerThere() {
		send(request(HttpMethod.GET, "/v0/status"));
		send(request(HttpMethod.GET, "/v0/entity?id=a"));
		assertThat(this.asked).isEmpty();
		assertThat(this.passedOn).hasSize(4);
		answerAsReactorNetty();
		answerAsReactorNetty();
		// Reactor Netty answered both: the next one is taken here again.
		send(request(HttpMethod.GET, "/v0/entity?id=b"));
		assertThat(this.asked).singleElement().extracting(Asked::uri).isEqualTo("/v0/entity?id=b");
	}

	@Test
	void requestsBehindAPendingAnswerWaitAndAreAnsweredInOrder() {
		this.immediate = false;
		put("/v0/entity?id=a", "1");
		send(request(HttpMethod.GET, "/v0/status"));
		put("/v0/entity?id=b", "2");
		assertThat(this.asked).hasSize(1);
		assertThat(this.passedOn).isEmpty();
		assertThat((Object) this.channel.readOutbound()).isNull();

		this.asked.get(0).reply().tryEmitValue(Reply.CREATED);
		assertThat(status(response())).isEqualTo(201);
		// The status request went on; the PUT after it now waits behind Reactor Netty.
		assertThat(this.passedOn).hasSize(4);
		assertThat(this.asked).hasSize(1);
		answerAsReactorNetty();
		assertThat(status(response())).isEqualTo(200);
		answerAsReactorNetty();
		assertThat(status(response())).isEqualTo(200);
	}

	@Test
	void pipelinedRequestsOfItsOwnAreTakenOneAfterTheOther() {
		this.immediate = false;
		put("/v0/entity?id=a", "1");
		send(request(HttpMethod.GET, "/v0/entity?id=a"));
		send(request(HttpMethod.DELETE, "/v0/entity?id=a"));
		assertThat(this.asked).hasSize(1);
		this.asked.get(0).reply().tryEmitValue(Reply.CREATED);
		assertThat(this.asked).hasSize(2);
		this.asked.get(1).reply().tryEmitValue(Reply.binary(ascii("1").array()));
		this.asked.get(2).reply().tryEmitValue(Reply.ACCEPTED);
		assertThat(List.of(status(response()), status(response()), status(response()))).containsExactly(201, 200, 202);
		assertThat(this.passedOn).isEmpty();
	}

	@Test
	void aTakenRequestTurnsReadingOnAndManyWaitingRequestsTurnItOffUntilServed() {
		this.channel.config().setAutoRead(false); // as Reactor Netty leaves it
		this.immediate = false;
		send(request(HttpMethod.GET, "/v0/entity?id=first"));
		assertThat(this.channel.config().isAutoRead()).isTrue();
		for (int i = 0; i < EntityChannelHandler.MAX_HELD; i++) {
			send(request(HttpMethod.GET, "/v0/entity?id=" + i));
		}
		assertThat(this.channel.config().isAutoRead()).isFalse();
		this.immediate = true;
		this.asked.get(0).reply().tryEmitValue(Reply.CREATED);
		assertThat(this.channel.config().isAutoRead()).isTrue();
		assertThat(this.asked).hasSize(1 + EntityChannelHandler.MAX_HELD);
		assertThat(this.channel.outboundMessages()).hasSize(1 + EntityChannelHandler.MAX_HELD);
	}

	@Test
	void aRequestAnsweredBeforeItsBodyCameHasTheRestSkipped() {
		this.refusal = Reply.text(HttpStatus.BAD_REQUEST, "bad id");
		this.channel.writeInbound(withLength(request(HttpMethod.PUT, "/v0/entity?id=a"), 4),
				new DefaultHttpContent(ascii("ab")));
		assertThat(status(response())).isEqualTo(400);
		assertThat(this.asked).isEmpty();
		assertThat(this.bodies.used()).isZero();
		this.channel.writeInbound(new DefaultLastHttpContent(ascii("cd")));
		send(request(HttpMethod.GET, "/v0/status"));
		assertThat(this.passedOn).hasSize(2);
		assertThat(this.channel.isOpen()).isTrue();
	}

	@Test
	void aCloseAskedWhileAnAnswerIsMadeWaitsForThatAnswer() {
		this.immediate = false;
		put("/v0/entity?id=a", "1");
		this.channel.close();
		assertThat(this.channel.isOpen()).isTrue();
		this.asked.get(0).reply().tryEmitValue(Reply.CREATED);
		assertThat(status(response())).isEqualTo(201);
		assertThat(this.channel.isOpen()).isFalse();
	}

	@Test
	void aConnectionLostCancelsTheAnswerAndGivesTheBodyBack() {
		this.immediate = false;
		put("/v0/entity?id=a", "12345");
		assertThat(this.bodies.used()).isEqualTo(5);
		this.channel.pipeline().fireChannelInactive();
		assertThat(this.asked.get(0).cancelled()).isTrue();
		assertThat(this.bodies.used()).isZero();
	}

	@Test
	void theBodyBudgetHoldsABodyUntilItsAnswerAndLeavesWhatDoesNotFitToReactorNetty() {
		this.immediate = false;
		put("/v0/entity?id=a", "x".repeat(60));
		assertThat(this.bodies.used()).isEqualTo(60);
		this.asked.get(0).reply().tryEmitValue(Reply.CREATED);
		assertThat(this.bodies.used()).isZero();

		// Other connections' bodies fill the budget: 50 more bytes do not fit.
		assertThat(this.bodies.tryReserve(60)).isTrue();
		put("/v0/entity?id=b", "y".repeat(50));
		assertThat(this.asked).hasSize(1);
		assertThat(this.passedOn).hasSize(2);
		assertThat(this.bodies.used()).isEqualTo(60);
	}

	@Test
	void theAnswerIsAskedForAtTheHeadAndGetsTheBodyOnceItAllCame() {
		this.immediate = false;
		this.channel.writeInbound(withLength(request(HttpMethod.PUT, "/v0/entity?id=a"), 4),
				new DefaultHttpContent(ascii("ab")));
		assertThat(this.asked).isEmpty();
		this.channel.writeInbound(new DefaultLastHttpContent(ascii("cd")));
		assertThat(this.asked).singleElement()
			.extracting((asked) -> new String(asked.body(), StandardCharsets.US_ASCII))
			.isEqualTo("abcd");
	}

	@Test
	void aBodyThatStopsArrivingIsAnswered408AndTheConnectionClosed() {
		HttpRequest head = withLength(request(HttpMethod.PUT, "/v0/entity?id=a"), 10);
		this.channel.writeInbound(head, new DefaultHttpContent(ascii("12345")));
		assertThat(this.bodies.used()).isEqualTo(10);
		this.channel.pipeline().fireExceptionCaught(ReadTimeoutException.INSTANCE);
		assertThat(status(response())).isEqualTo(408);
		assertThat(this.channel.isOpen()).isFalse();
		assertThat(this.asked).isEmpty();
		assertThat(this.bodies.used()).isZero();
	}

	@Test
	void aBodyPartTheDecoderFailedIsAnswered400AndTheConnectionClosed() {
		HttpRequest head = withLength(request(HttpMethod.PUT, "/v0/entity?id=a"), 3);
		LastHttpContent last = new DefaultLastHttpContent(ascii("abc"));
		last.setDecoderResult(DecoderResult.failure(new IllegalArgumentException("bad chunk")));
		this.channel.writeInbound(head, last);
		assertThat(status(response())).isEqualTo(400);
		assertThat(this.channel.isOpen()).isFalse();
		assertThat(this.asked).isEmpty();
	}

	@Test
	void theResponseCarriesTheReplysHeadersAndBody() {
		this.immediate = false;
		send(request(HttpMethod.GET, "/v0/entity?id=a"));
		this.asked.get(0).reply().tryEmitValue(Reply.retryLater("busy"));
		FullHttpResponse response = response();
		try {
			assertThat(response.status().code()).isEqualTo(503);
			assertThat(response.headers().get(HttpHeaderNames.RETRY_AFTER)).isEqualTo("1");
			assertThat(response.headers().get(HttpHeaderNames.CONTENT_TYPE)).isEqualTo("text/plain");
			assertThat(response.headers().get(HttpHeaderNames.CONTENT_LENGTH)).isEqualTo("5");
			assertThat(response.content().toString(StandardCharsets.UTF_8)).isEqualTo("busy\n");
		}
		finally {
			response.release();
		}
	}

	private void put(String uri, String body) {
		this.channel.writeInbound(withLength(request(HttpMethod.PUT, uri), body.length()),
				new DefaultLastHttpContent(ascii(body)));
	}

	private void send(HttpRequest request) {
		this.channel.writeInbound(request, new DefaultLastHttpContent());
	}

	/** Reactor Netty's answer to the oldest request it was handed and not answered. */
	private void answerAsReactorNetty() {
		this.channel.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK));
	}

	private static HttpRequest request(HttpMethod method, String uri) {
		return new DefaultHttpRequest(HttpVersion.HTTP_1_1, method, uri);
	}

	private static HttpRequest withLength(HttpRequest request, int length) {
		request.headers().set(HttpHeaderNames.CONTENT_LENGTH, length);
		return request;
	}

	private static ByteBuf ascii(String text) {
		return Unpooled.copiedBuffer(text, StandardCharsets.US_ASCII);
	}

	private FullHttpResponse response() {
		FullHttpResponse response = this.channel.readOutbound();
		assertThat(response).as("a response").isNotNull();
		return response;
	}

	private static int status(FullHttpResponse response) {
		try {
			return response.status().code();
		}
		finally {
			response.release();
		}
	}

}
