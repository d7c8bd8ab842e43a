package io.quorumkv.service.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.timeout.ReadTimeoutException;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ConnectionTimeouts} on an embedded channel whose clock the test moves: read
 * timeout 30 s, idle timeout 60 s.
 */
class ConnectionTimeoutsTest {

	private final List<Throwable> errors = new ArrayList<>();

	private EmbeddedChannel channel;

	@BeforeEach
	void channel() {
		this.channel = new EmbeddedChannel();
		this.channel.freezeTime();
		this.channel.pipeline()
			.addLast(new ConnectionTimeouts(Duration.ofSeconds(30), Duration.ofSeconds(60)),
					new ChannelInboundHandlerAdapter() {

						@Override
						public void channelRead(ChannelHandlerContext ctx, Object msg) {
							ReferenceCountUtil.release(msg);
						}

						@Override
						public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
							ConnectionTimeoutsTest.this.errors.add(cause);
						}

					});
	}

	@AfterEach
	void close() {
		this.channel.finishAndReleaseAll();
	}

	@Test
	void aConnectionThatSendsNothingIsClosedAfterTheIdleTimeout() {
		assertClosedByTheIdleTimeoutOnly();
	}

	@Test
	void aBodyThatStopsArrivingRaisesTheReadTimeoutAndClosesTheConnection() {
		this.channel.writeInbound(head());
		this.channel.writeInbound(part());
		after(29);
		assertThat(this.channel.isOpen()).isTrue();
		after(2);
		assertThat(this.errors).containsExactly(ReadTimeoutException.INSTANCE);
		assertThat(this.channel.isOpen()).isFalse();
	}

	@Test
	void theReadTimeoutOfABodyDoesNotWaitForTheIdleTimeout() {
		// The connection's timer is armed for the idle timeout when the head comes in.
		after(10);
		this.channel.writeInbound(head());
		after(31);
		assertThat(this.errors).containsExactly(ReadTimeoutException.INSTANCE);
		assertThat(this.channel.isOpen()).isFalse();
	}

	@Test
	void aBodyArrivingSlowlyButSteadilyIsNotCut() {
		this.channel.writeInbound(head());
		for (int i = 0; i < 6; i++) {
			after(25);
			this.channel.writeInbound(part());
		}
		this.channel.writeInbound(LastHttpContent.EMPTY_LAST_CONTENT);
		after(59);
		assertThat(this.channel.isOpen()).isTrue();
		assertThat(this.errors).isEmpty();
	}

	@Test
	void aRequestBeingAnsweredIsCutByNeitherTimeout() {
		this.channel.writeInbound(fullRequest());
		for (int i = 0; i < 10; i++) {
			after(60);
		}
		assertThat(this.channel.isOpen()).isTrue();
		assertThat(this.errors).isEmpty();
	}

	@Test
	void theIdleTimeoutCountsFromTheEndOfTheLastResponse() {
		this.channel.writeInbound(fullRequest());
		after(50);
		this.channel.writeOutbound(response(HttpResponseStatus.OK));
		assertClosedByTheIdleTimeoutOnly();
	}

	@Test
	void pipelinedRequestsKeepTheConnectionUntilTheLastIsAnswered() {
		this.channel.writeInbound(fullRequest(), fullRequest());
		this.channel.writeOutbound(response(HttpResponseStatus.OK));
		after(120);
		assertThat(this.channel.isOpen()).as("second request still being answered").isTrue();
		// A response sent in parts ends with its last part.
		this.channel.writeOutbound(new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK));
		this.channel.writeOutbound(new DefaultHttpContent(Unpooled.wrappedBuffer(new byte[] { 1 })));
		after(120);
		assertThat(this.channel.isOpen()).as("last part not written yet").isTrue();
		this.channel.writeOutbound(LastHttpContent.EMPTY_LAST_CONTENT);
		after(61);
		assertThat(this.channel.isOpen()).isFalse();
	}

	@Test
	void anInterimResponseDoesNotEndTheRequest() {
		this.channel.writeInbound(head());
		this.channel.writeOutbound(response(HttpResponseStatus.CONTINUE));
		this.channel.writeInbound(new DefaultHttpContent(Unpooled.wrappedBuffer(new byte[] { 1 })),
				LastHttpContent.EMPTY_LAST_CONTENT);
		after(180);
		assertThat(this.channel.isOpen()).as("the request is still being answered").isTrue();
		assertThat(this.errors).isEmpty();
	}

	@Test
	void aBodyStillArrivingAfterAnEarlyRefusalIsStillBoundedByTheReadTimeout() {
		this.channel.writeInbound(head());
		this.channel.writeOutbound(response(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE));
		after(31);
		assertThat(this.errors).containsExactly(ReadTimeoutException.INSTANCE);
		assertThat(this.channel.isOpen()).isFalse();
	}

	@Test
	void timeoutsMustBePositive() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new ConnectionTimeouts(Duration.ZERO, Duration.ofSeconds(1)))
			.withMessageContaining("read timeout");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new ConnectionTimeouts(Duration.ofSeconds(1), Duration.ofSeconds(-1)))
			.withMessageContaining("idle timeout");
	}

	/**
	 * Open one second before the idle timeout (60 s from now), closed one second after
	 * it.
	 */
	private void assertClosedByTheIdleTimeoutOnly() {
		after(59);
		assertThat(this.channel.isOpen()).isTrue();
		after(2);
		assertThat(this.channel.isOpen()).isFalse();
		assertThat(this.errors).isEmpty();
	}

	private void after(long seconds) {
		this.channel.advanceTimeBy(seconds, TimeUnit.SECONDS);
		this.channel.runScheduledPendingTasks();
		this.channel.runPendingTasks();
	}

	private static DefaultHttpRequest head() {
		DefaultHttpRequest request = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.PUT, "/v0/entity?id=k");
		request.headers().set("content-length", "100");
		return request;
	}

	private static DefaultHttpContent part() {
		return new DefaultHttpContent(Unpooled.wrappedBuffer(new byte[] { 1, 2, 3 }));
	}

	private static DefaultFullHttpRequest fullRequest() {
		return new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/v0/entity?id=k");
	}

	private static DefaultFullHttpResponse response(HttpResponseStatus status) {
		return new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status);
	}

}
