package io.quorumkv.service.http;

import java.util.ArrayDeque;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.timeout.ReadTimeoutException;
import io.netty.util.ReferenceCountUtil;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpStatus;

/**
 * Serves {@code GET}, {@code PUT} and {@code DELETE /v0/entity} of one HTTP/1.1
 * connection in the channel pipeline itself, ahead of Reactor Netty's HTTP server, which
 * serves everything else on the connection as before. Same answers, same code behind them
 * ({@link DirectRoutes#entity}: the in-flight limit, parsing, replication, errors and
 * {@code quorumkv.requests} timers), same body limit and {@link BodyBudget}. What is left
 * out is Reactor Netty's per-request machinery: an {@code HttpServerOperations} with its
 * inbound flux per request, which turns the connection's read interest off and on again
 * around every request (two {@code epoll_ctl} calls), and the publishers that write the
 * answer: ~8% of a coordinator's CPU per request at three nodes, ~20% of a single node's
 * (docs/performance.md).
 *
 * <p>
 * It takes a request only when nothing else is under way on the connection and the
 * request is of the plain kind: HTTP/1.1, keep-alive, no {@code Expect}, no
 * {@code Upgrade}, decoded without error, a body of an announced length within
 * {@code quorumkv.http.max-body-size} (none for GET and DELETE) that fits the body
 * budget. Any other request goes to Reactor Netty untouched, and so does every request
 * while one given to Reactor Netty is still being answered (Reactor Netty keeps their
 * order itself). Requests pipelined behind one taken here wait in this handler, in order,
 * until its answer is written; reading stops while more than a few wait, so they are
 * bounded by what the client had sent already.
 *
 * <p>
 * A close of the connection asked while an answer is being made here (Reactor Netty's
 * graceful shutdown closes connections with no request of its own under way) waits for
 * that answer to be written; {@link EntityChannelDrain} holds the shutdown until the
 * answers are made. All methods run on the connection's event loop; an answer made on
 * another thread is handed to it.
 */
public final class EntityChannelHandler extends ChannelDuplexHandler {

	/** The handler's name in the pipeline. */
	public static final String NAME = "quorumkv.entityChannel";

	/** Reading stops while more messages than this wait behind an answer. */
	static final int MAX_HELD = 16;

	private final Answers answers;

	private final BodyBudget bodies;

	private final int maxBodySize;

	/** Requests handed to Reactor Netty whose response was not written to its end yet. */
	private int passedOn;

	/** The body of the last request handed to Reactor Netty is still arriving. */
	private boolean passingBody;

	/** The request this handler serves: reading its body or waiting for its answer. */
	private @Nullable Exchange current;

	/** Messages that came in while {@link #current} was waiting for its answer. */
	private final ArrayDeque<Object> held = new ArrayDeque<>();

	private boolean draining;

	/** This handler turned reading off while messages wait. */
	private boolean readPaused;

	/** The rest of the body of a request answered before it all came is being skipped. */
	private boolean skippingBody;

	/** A close asked while an answer was being made: done once it is written. */
	private @Nullable ChannelPromise deferredClose;

	public EntityChannelHandler(DirectRoutes routes, BodyBudget bodies, int maxBodySize) {
		this(routes::entity, bodies, maxBodySize);
	}

	EntityChannelHandler(Answers answers, BodyBudget bodies, int maxBodySize) {
		this.answers = answers;
		this.bodies = bodies;
		this.maxBodySize = maxBodySize;
	}

	@Override
	public void channelRead(ChannelHandlerContext ctx, Object msg) {
		if (!this.held.isEmpty() || !accepting()) {
			this.held.add(msg);
			if (this.held.size() > MAX_HELD && !this.readPaused && this.passedOn == 0) {
				// Nothing of Reactor Netty's is under way (a request is taken only then),
				// so nothing else manages the connection's reading now.
				this.readPaused = true;
				ctx.channel().config().setAutoRead(false);
			}
			return;
		}
		route(ctx, msg);
	}

	/** Whether the next message can be routed now (else it waits). */
	private boolean accepting() {
		return (this.current == null || this.current.reading) && this.deferredClose == null;
	}

	private void route(ChannelHandlerContext ctx, Object msg) {
		if (this.skippingBody && msg instanceof HttpContent && !(msg instanceof HttpRequest)) {
			ReferenceCountUtil.release(msg);
			if (msg instanceof LastHttpContent) {
				this.skippingBody = false;
			}
			return;
		}
		this.skippingBody = false; // the decoder ends every body first: cannot be on here
		Exchange exchange = this.current;
		if (exchange != null && exchange.reading) {
			// Reading a taken request's body: the decoder sends its parts before anything
			// else.
			if (msg instanceof HttpContent content && !(msg instanceof HttpRequest)) {
				read(ctx, exchange, content);
			}
			else {
				ReferenceCountUtil.release(msg);
				refuse(ctx, exchange, Reply.text(HttpStatus.BAD_REQUEST, "malformed request body"));
			}
			return;
		}
		if (msg instanceof HttpRequest request) {
			long length = (this.passedOn == 0 && !this.passingBody) ? takenLength(request) : -1;
			if (length >= 0 && (length == 0 || this.bodies.tryReserve((int) length))) {
				take(ctx, request, (int) length);
				return;
			}
			this.passedOn++;
			this.passingBody = !(msg instanceof LastHttpContent);
		}
		else if (msg instanceof LastHttpContent) {
			this.passingBody = false;
		}
		ctx.fireChannelRead(msg);
	}

	/**
	 * The body length of a request this handler takes, -1 for one it leaves to Reactor
	 * Netty.
	 */
	private long takenLength(HttpRequest request) {
		if (!request.decoderResult().isSuccess() || request.protocolVersion() != HttpVersion.HTTP_1_1
				|| !HttpUtil.isKeepAlive(request) || request.headers().contains(HttpHeaderNames.EXPECT)
				|| request.headers().contains(HttpHeaderNames.UPGRADE)
				|| request.headers().contains(HttpHeaderNames.TRANSFER_ENCODING)) {
			return -1;
		}
		HttpMethod method = request.method();
		if (!DirectRoutes.matches(method, request.uri())) {
			return -1;
		}
		long length;
		try {
			length = HttpUtil.getContentLength(request, 0L);
		}
		catch (NumberFormatException ex) {
			return -1; // Reactor Netty's decoder refuses it
		}
		if (length == 0) {
			return 0;
		}
		return (HttpMethod.PUT.equals(method) && length > 0 && length <= this.maxBodySize) ? length : -1;
	}

	private void take(ChannelHandlerContext ctx, HttpRequest request, int length) {
		Exchange exchange = new Exchange(request.method(), request.uri(), length);
		this.current = exchange;
		if (!ctx.channel().config().isAutoRead()) {
			// Reactor Netty reads on demand: one read per read() call, the read interest
			// turned off at each read's end (an epoll_ctl call each way per request).
			// Here the connection is read as bytes come, and reading stops only when
			// too many pipelined requests wait. Reactor Netty turns it off again for a
			// request of its own.
			ctx.channel().config().setAutoRead(true);
		}
		// Asked at once, as Reactor Netty's route does: a request refused for its target
		// is answered while its body still comes, and the in-flight limit counts it from
		// its head on.
		ask(ctx, exchange);
		if (request instanceof HttpContent content) {
			read(ctx, exchange, content);
		}
		else {
			ReferenceCountUtil.release(request);
		}
	}

	private void read(ChannelHandlerContext ctx, Exchange exchange, HttpContent content) {
		try {
			if (content.decoderResult().isFailure()) {
				refuse(ctx, exchange, Reply.text(HttpStatus.BAD_REQUEST, "malformed request body"));
				return;
			}
			int size = content.content().readableBytes();
			if (size > exchange.body.length - exchange.received) {
				// The decoder frames a body by its announced length: cannot happen.
				refuse(ctx, exchange, Reply.text(HttpStatus.BAD_REQUEST, "request body longer than announced"));
				return;
			}
			content.content().getBytes(content.content().readerIndex(), exchange.body, exchange.received, size);
			exchange.received += size;
		}
		finally {
			ReferenceCountUtil.release(content);
		}
		if (content instanceof LastHttpContent) {
			if (exchange.received != exchange.body.length) {
				refuse(ctx, exchange, Reply.text(HttpStatus.BAD_REQUEST, "request body shorter than announced"));
				return;
			}
			exchange.reading = false;
			MonoSink<byte[]> waiting = exchange.bodyWaiter;
			if (waiting != null) {
				exchange.bodyWaiter = null;
				waiting.success(exchange.body);
			}
		}
	}

	/**
	 * Asks for the answer; the body is handed to it once it all came (at once when it
	 * has).
	 */
	private void ask(ChannelHandlerContext ctx, Exchange exchange) {
		Mono<byte[]> whole = Mono.create((sink) -> {
			if (exchange.reading) {
				exchange.bodyWaiter = sink;
			}
			else {
				sink.success(exchange.body);
			}
		});
		RequestBody body = (maxSize, use) -> (exchange.body.length > maxSize)
				? Mono.error(new DataBufferLimitException("request body exceeds " + maxSize + " bytes"))
				: whole.flatMap(use);
		Disposable subscription = this.answers
			.answer(exchange.method, exchange.uri, HttpMethod.PUT.equals(exchange.method) ? exchange.body.length : -1,
					body)
			.subscribe((reply) -> respond(ctx, exchange, reply),
					(error) -> respond(ctx, exchange, ErrorResponses.toReply(error)));
		if (!exchange.answered) {
			exchange.subscription = subscription;
		}
	}

	/** A request that cannot be answered normally: answered and the connection closed. */
	private void refuse(ChannelHandlerContext ctx, Exchange exchange, Reply reply) {
		cancel(exchange);
		exchange.reading = false;
		exchange.closeAfter = true;
		respond(ctx, exchange, reply);
	}

	private void respond(ChannelHandlerContext ctx, Exchange exchange, Reply reply) {
		if (!ctx.executor().inEventLoop()) {
			ctx.executor().execute(() -> respond(ctx, exchange, reply));
			return;
		}
		if (exchange.answered) {
			return;
		}
		exchange.answered = true;
		exchange.subscription = null;
		exchange.bodyWaiter = null;
		release(exchange);
		if (this.current != exchange) {
			return; // the connection closed meanwhile
		}
		this.current = null;
		if (exchange.reading && !exchange.closeAfter) {
			// Answered before its body all came (a refusal): the rest is skipped, and the
			// next request taken after it, as Reactor Netty does.
			exchange.reading = false;
			this.skippingBody = true;
			ctx.writeAndFlush(reply.toNettyResponse()).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
			return;
		}
		ChannelPromise close = this.deferredClose;
		if (exchange.closeAfter || close != null) {
			this.deferredClose = null;
			ctx.writeAndFlush(reply.toNettyResponse());
			releaseHeld();
			ctx.close((close != null) ? close : ctx.newPromise());
			return;
		}
		ctx.writeAndFlush(reply.toNettyResponse()).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
		drain(ctx);
	}

	/** Routes the waiting messages until one has to wait again. */
	private void drain(ChannelHandlerContext ctx) {
		if (this.draining) {
			return;
		}
		this.draining = true;
		boolean routed = false;
		try {
			while (!this.held.isEmpty() && accepting()) {
				route(ctx, this.held.poll());
				routed = true;
			}
		}
		finally {
			this.draining = false;
		}
		if (routed && this.passedOn > 0) {
			ctx.fireChannelReadComplete();
		}
		if (this.readPaused && this.held.size() <= MAX_HELD) {
			this.readPaused = false;
			// Once Reactor Netty has a request under way it reads on demand itself, from
			// reading off as now.
			if (this.passedOn == 0) {
				ctx.channel().config().setAutoRead(true);
			}
		}
	}

	@Override
	public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
		// Only Reactor Netty's responses pass here; this handler's own are written below
		// it.
		if (msg instanceof LastHttpContent && !isInterim(msg) && this.passedOn > 0) {
			this.passedOn--;
		}
		super.write(ctx, msg, promise);
	}

	/** A 1xx response (such as 100 Continue) comes before the real one. */
	private static boolean isInterim(Object msg) {
		return msg instanceof HttpResponse response && response.status().codeClass() == HttpStatusClass.INFORMATIONAL;
	}

	@Override
	public void close(ChannelHandlerContext ctx, ChannelPromise promise) throws Exception {
		Exchange exchange = this.current;
		if (exchange != null && !exchange.reading && this.deferredClose == null && ctx.channel().isActive()) {
			this.deferredClose = promise;
			return;
		}
		super.close(ctx, promise);
	}

	@Override
	public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
		if (this.skippingBody) {
			ctx.close(); // the rest of an answered request's body did not come
			return;
		}
		Exchange exchange = this.current;
		if (exchange == null) {
			ctx.fireExceptionCaught(cause);
			return;
		}
		// This request's: Reactor Netty has none under way. A body that stopped arriving
		// (ConnectionTimeouts) is answered 408; after any other failure the connection
		// is closed, and an answer being made cancelled.
		if (exchange.reading && cause instanceof ReadTimeoutException) {
			refuse(ctx, exchange, ErrorResponses.toReply(cause));
		}
		else {
			ctx.close();
		}
	}

	@Override
	public void channelInactive(ChannelHandlerContext ctx) {
		abandon();
		ctx.fireChannelInactive();
	}

	@Override
	public void handlerRemoved(ChannelHandlerContext ctx) {
		abandon();
	}

	/** The connection is gone: cancel the answer being made, drop what waits. */
	private void abandon() {
		Exchange exchange = this.current;
		this.current = null;
		if (exchange != null && !exchange.answered) {
			exchange.answered = true;
			cancel(exchange);
			release(exchange);
		}
		releaseHeld();
		ChannelPromise close = this.deferredClose;
		this.deferredClose = null;
		if (close != null) {
			close.trySuccess();
		}
	}

	private void releaseHeld() {
		for (Object msg = this.held.poll(); msg != null; msg = this.held.poll()) {
			ReferenceCountUtil.release(msg);
		}
	}

	private static void cancel(Exchange exchange) {
		Disposable subscription = exchange.subscription;
		if (subscription != null) {
			subscription.dispose();
		}
	}

	/** Gives the body's bytes back to the budget: once, when the exchange is answered. */
	private void release(Exchange exchange) {
		if (exchange.body.length > 0) {
			this.bodies.release(exchange.body.length);
		}
	}

	/** What answers a request taken here: {@link DirectRoutes#entity}. */
	@FunctionalInterface
	interface Answers {

		Mono<Reply> answer(HttpMethod method, String uri, long contentLength, RequestBody body);

	}

	/** A request taken by this handler. */
	private static final class Exchange {

		private static final byte[] EMPTY = new byte[0];

		final HttpMethod method;

		final String uri;

		final byte[] body;

		int received;

		boolean reading = true;

		boolean answered;

		boolean closeAfter;

		@Nullable Disposable subscription;

		/** The answer waiting for the body. */
		@Nullable MonoSink<byte[]> bodyWaiter;

		Exchange(HttpMethod method, String uri, int length) {
			this.method = method;
			this.uri = uri;
			this.body = (length == 0) ? EMPTY : new byte[length];
		}

	}

}
