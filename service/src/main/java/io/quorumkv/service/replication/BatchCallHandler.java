package io.quorumkv.service.replication;

import java.io.IOException;
import java.util.Arrays;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import org.jspecify.annotations.Nullable;

/**
 * The end of one batch connection's pipeline ({@link BatchConnections}): writes a call's
 * request and collects its answer into one array, checked against the largest answer
 * taken as it comes. One call at a time; runs on the connection's event loop only.
 */
final class BatchCallHandler extends ChannelInboundHandlerAdapter {

	/** Who waits for the answer of the call under way. */
	interface Caller {

		/**
		 * The whole answer came: its status, its body, and whether the peer keeps the
		 * connection.
		 */
		void answered(BatchCallHandler connection, int status, byte[] answer, boolean keepAlive);

		/**
		 * The call failed; the connection is closed or closing.
		 * @param beforeAnswer whether none of the answer had come
		 */
		void failed(BatchCallHandler connection, Throwable error, boolean beforeAnswer);

	}

	private static final int UNKNOWN_LENGTH_START = 512;

	private static final byte[] NONE = new byte[0];

	private final int maxAnswer;

	private @Nullable Channel channel;

	private @Nullable Caller caller;

	private int calls;

	private long idleSince;

	private boolean answering;

	private int status;

	private boolean keepAlive;

	private byte[] answer = NONE;

	private int received;

	BatchCallHandler(int maxAnswer) {
		this.maxAnswer = maxAnswer;
	}

	@Override
	public void handlerAdded(ChannelHandlerContext ctx) {
		this.channel = ctx.channel();
	}

	Channel channel() {
		Channel current = this.channel;
		if (current == null) {
			throw new IllegalStateException("not in a pipeline yet");
		}
		return current;
	}

	/** Whether the call under way is not this connection's first. */
	boolean wasReused() {
		return this.calls > 1;
	}

	long idleSince() {
		return this.idleSince;
	}

	void markIdle() {
		this.idleSince = System.nanoTime();
	}

	/** Writes the request of a call; the answer or the failure goes to {@code caller}. */
	void begin(Caller caller, FullHttpRequest request) {
		this.caller = caller;
		this.calls++;
		this.answering = false;
		this.received = 0;
		channel().writeAndFlush(request).addListener((future) -> {
			if (!future.isSuccess() && this.caller == caller) {
				fail(future.cause(), !this.answering);
			}
		});
	}

	/**
	 * Gives up the call under way: the connection closes, so its answer is never read.
	 */
	void abandon() {
		this.caller = null;
		channel().close();
	}

	@Override
	public void channelRead(ChannelHandlerContext ctx, Object message) {
		try {
			if (this.caller == null) {
				// Bytes no call asked for: the connection cannot be trusted any more.
				ctx.close();
				return;
			}
			if (message instanceof HttpResponse response) {
				if (!start(response)) {
					return;
				}
			}
			if (message instanceof HttpContent content && !add(content.content())) {
				return;
			}
			if (message instanceof LastHttpContent) {
				Caller done = this.caller;
				this.caller = null;
				byte[] body = (this.received == this.answer.length) ? this.answer
						: Arrays.copyOf(this.answer, this.received);
				this.answer = NONE;
				done.answered(this, this.status, body, this.keepAlive);
			}
		}
		finally {
			ReferenceCountUtil.release(message);
		}
	}

	private boolean start(HttpResponse response) {
		this.answering = true;
		if (response.decoderResult().isFailure()) {
			fail(new PeerException("unreadable answer: " + response.decoderResult().cause()), false);
			return false;
		}
		this.status = response.status().code();
		this.keepAlive = HttpUtil.isKeepAlive(response);
		long length = HttpUtil.getContentLength(response, -1L);
		if (length > this.maxAnswer) {
			fail(tooLong(), false);
			return false;
		}
		this.answer = new byte[(length >= 0) ? (int) length : Math.min(UNKNOWN_LENGTH_START, this.maxAnswer)];
		this.received = 0;
		return true;
	}

	private boolean add(ByteBuf content) {
		int length = content.readableBytes();
		if (length > this.maxAnswer - this.received) {
			fail(tooLong(), false);
			return false;
		}
		int needed = this.received + length;
		if (needed > this.answer.length) {
			this.answer = Arrays.copyOf(this.answer,
					(int) Math.min(this.maxAnswer, Math.max(needed, 2L * this.answer.length)));
		}
		content.getBytes(content.readerIndex(), this.answer, this.received, length);
		this.received = needed;
		return true;
	}

	private PeerException tooLong() {
		return new PeerException("replica answer exceeds " + this.maxAnswer + " bytes");
	}

	@Override
	public void channelInactive(ChannelHandlerContext ctx) {
		if (this.caller != null) {
			fail(new PeerException("the connection to the peer closed before the whole answer"), !this.answering);
		}
		ctx.fireChannelInactive();
	}

	@Override
	public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
		if (this.caller != null) {
			// A reset before any answer is the peer closing an idle connection too.
			fail(cause, !this.answering && cause instanceof IOException);
		}
		else {
			ctx.close();
		}
	}

	/** Closes the connection and fails the call under way. */
	private void fail(Throwable error, boolean beforeAnswer) {
		Caller failed = this.caller;
		this.caller = null;
		this.answer = NONE;
		channel().close();
		if (failed != null) {
			failed.failed(this, error, beforeAnswer);
		}
	}

}
