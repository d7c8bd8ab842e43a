package io.quorumkv.service.replication;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.NetUtil;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.quorumkv.service.cluster.Node;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.scheduler.Schedulers;
import reactor.netty.resources.LoopResources;

/**
 * The batch calls' HTTP/1.1 connections to the peers, each owned by one event loop: a
 * call made on a loop goes out on one of that loop's connections to the peer and is
 * answered on it, so that neither the call nor its answer crosses to another thread.
 * Reactor Netty's pool keeps one set of connections per peer for all loops: a call made
 * on one loop with a connection of another was handed over to that loop (a task and a
 * wake-up, ~9% of the coordinator's CPU samples at three nodes), and every call paid the
 * client's per-request machinery (connection observers, operations, header maps, Reactor
 * operators). Here a call is one request written to an idle connection and one handler
 * that collects its answer (docs/performance.md).
 *
 * <p>
 * A connection carries one call at a time and goes back to its loop's idle set when the
 * answer has come whole and the peer keeps the connection alive. A call that is cancelled
 * (the time limiter of {@link PeerClient}) closes its connection, so a late answer is
 * never read as the answer to the next call. A reused connection that the peer closed
 * before any of the answer came (its idle timeout) is retried once on a new connection: a
 * batch call may be repeated, as a replica keeps the greater of two versions. Each loop
 * opens at most {@code maxPerLoop} connections to a peer (the peer's batcher runs far
 * fewer calls at once); idle connections are closed after {@code maxIdle}. Everything
 * about a loop's connections is touched only on that loop.
 */
final class BatchConnections implements AutoCloseable {

	/** A call's connections before it starts; never used. */
	private static final PeerConnections NOT_STARTED = new PeerConnections();

	private final EventExecutor[] loops;

	private final LoopConnections[] perLoop;

	private final EventLoopGroup group;

	private final Class<? extends SocketChannel> channelClass;

	private final String secret;

	private final int maxAnswer;

	private final int connectTimeoutMillis;

	private final int maxPerLoop;

	private final long maxIdleNanos;

	private final ChannelGroup all = new DefaultChannelGroup("quorumkv-batch-connections",
			GlobalEventExecutor.INSTANCE);

	private volatile boolean closed;

	/**
	 * @param loops the node's event loops (the server's)
	 * @param maxAnswer the largest answer body taken; a longer one fails the call
	 */
	BatchConnections(LoopResources loops, String secret, int maxAnswer, Duration connectTimeout, int maxPerLoop,
			Duration maxIdle, MeterRegistry meters) {
		this.group = loops.onServer(LoopResources.DEFAULT_NATIVE);
		this.channelClass = loops.onChannelClass(SocketChannel.class, this.group);
		this.loops = EventLoops.of(this.group);
		this.secret = secret;
		this.maxAnswer = maxAnswer;
		this.connectTimeoutMillis = (int) Math.min(Integer.MAX_VALUE, connectTimeout.toMillis());
		this.maxPerLoop = maxPerLoop;
		this.maxIdleNanos = maxIdle.toNanos();
		this.perLoop = new LoopConnections[this.loops.length];
		for (int i = 0; i < this.loops.length; i++) {
			this.perLoop[i] = new LoopConnections((EventLoop) this.loops[i]);
		}
		Gauge.builder("quorumkv.replica.batch.connections", this.all, ChannelGroup::size)
			.description("Open connections of the batch calls to the peers")
			.register(meters);
	}

	/** Sends {@code body} to the peer's batch endpoint and emits the answer body. */
	Mono<byte[]> call(Node peer, byte[] body) {
		return Mono.create((sink) -> {
			int index = EventLoops.indexOfCurrent(this.loops);
			if (index < 0) {
				// Off the loops (a test, a hint delivery): any loop will do.
				index = EventLoops.indexOf(this.loops, this.group.next());
			}
			Call call = new Call(this.perLoop[index], peer, body, sink);
			if (this.loops[index].inEventLoop()) {
				call.start();
			}
			else {
				try {
					this.loops[index].execute(call::start);
				}
				catch (RejectedExecutionException ex) {
					sink.error(new PeerException("the node is shutting down: no batch call to " + peer));
				}
			}
		});
	}

	/** Closes every connection; calls under way fail, later calls fail at once. */
	@Override
	public void close() {
		this.closed = true;
		for (LoopConnections connections : this.perLoop) {
			connections.stopSweeping();
		}
		this.all.close();
	}

	/** One loop's connections, by peer; used only on that loop. */
	private final class LoopConnections {

		private final EventLoop loop;

		private final Map<String, PeerConnections> byPeer = new HashMap<>();

		private @Nullable ScheduledFuture<?> sweeper;

		LoopConnections(EventLoop loop) {
			this.loop = loop;
		}

		PeerConnections of(Node peer) {
			PeerConnections connections = this.byPeer.get(peer.id());
			if (connections == null) {
				connections = new PeerConnections();
				this.byPeer.put(peer.id(), connections);
				if (this.sweeper == null) {
					long period = Math.max(1, BatchConnections.this.maxIdleNanos / 2);
					this.sweeper = this.loop.scheduleAtFixedRate(this::sweep, period, period, TimeUnit.NANOSECONDS);
				}
			}
			return connections;
		}

		private void sweep() {
			long now = System.nanoTime();
			for (PeerConnections connections : this.byPeer.values()) {
				connections.closeIdleSince(now - BatchConnections.this.maxIdleNanos);
			}
		}

		void stopSweeping() {
			ScheduledFuture<?> timer = this.sweeper;
			if (timer != null) {
				timer.cancel(false);
			}
		}

	}

	/** One loop's connections to one peer. */
	private static final class PeerConnections {

		/** Idle connections, the most recently used last. */
		final ArrayDeque<BatchCallHandler> idle = new ArrayDeque<>();

		/** Connections open or opening, idle or not. */
		int open;

		@Nullable BatchCallHandler takeIdle(long staleBefore) {
			BatchCallHandler connection;
			while ((connection = this.idle.pollLast()) != null) {
				if (connection.channel().isActive() && connection.idleSince() - staleBefore > 0) {
					return connection;
				}
				connection.channel().close();
			}
			return null;
		}

		/** Back to the idle set, the most recently used. */
		void release(BatchCallHandler connection) {
			connection.markIdle();
			this.idle.addLast(connection);
		}

		void closeIdleSince(long staleBefore) {
			// The least recently used first: stop at the first one still fresh.
			BatchCallHandler connection;
			while ((connection = this.idle.peekFirst()) != null && connection.idleSince() - staleBefore <= 0) {
				this.idle.pollFirst();
				connection.channel().close();
			}
		}

	}

	/** One batch call; runs on its loop. */
	private final class Call implements BatchCallHandler.Caller {

		private final LoopConnections loop;

		/** Set when the call starts on its loop: a loop's maps are touched only there. */
		private PeerConnections connections;

		private final Node peer;

		private final byte[] body;

		private final MonoSink<byte[]> sink;

		private @Nullable BatchCallHandler connection;

		private boolean done;

		private boolean retried;

		Call(LoopConnections loop, Node peer, byte[] body, MonoSink<byte[]> sink) {
			this.loop = loop;
			this.connections = NOT_STARTED;
			this.peer = peer;
			this.body = body;
			this.sink = sink;
		}

		void start() {
			this.connections = this.loop.of(this.peer);
			this.sink.onCancel(() -> onLoop(this::cancel));
			if (BatchConnections.this.closed) {
				fail(new PeerException("the peer client is closed: no batch call to " + this.peer));
				return;
			}
			BatchCallHandler idle = this.connections.takeIdle(System.nanoTime() - BatchConnections.this.maxIdleNanos);
			if (idle != null) {
				send(idle);
			}
			else {
				connect();
			}
		}

		private void connect() {
			if (this.connections.open >= BatchConnections.this.maxPerLoop) {
				fail(new PeerException(BatchConnections.this.maxPerLoop + " connections to " + this.peer
						+ " already carry batch calls from this event loop"));
				return;
			}
			this.connections.open++;
			URI url = this.peer.url();
			String host = url.getHost();
			int port = url.getPort();
			byte[] literal = NetUtil.createByteArrayFromIpAddressString(host);
			if (literal != null) {
				connect(address(literal, host, port));
				return;
			}
			// A name is looked up off the loop, where a blocking lookup may wait.
			Mono.fromCallable(() -> new InetSocketAddress(InetAddress.getByName(host), port))
				.subscribeOn(Schedulers.boundedElastic())
				.subscribe((address) -> onLoop(() -> connect(address)), (error) -> onLoop(() -> {
					this.connections.open--;
					fail(new PeerException("cannot resolve " + host + ": " + error.getMessage()));
				}));
		}

		/**
		 * Runs {@code task} on the call's loop; a loop that is stopping refuses it and
		 * closes its connections itself.
		 */
		private void onLoop(Runnable task) {
			if (this.loop.loop.inEventLoop()) {
				task.run();
				return;
			}
			try {
				this.loop.loop.execute(task);
			}
			catch (RejectedExecutionException ex) {
				// The node is stopping: the time limiter ends the call.
			}
		}

		private void connect(InetSocketAddress address) {
			if (this.done || BatchConnections.this.closed) {
				this.connections.open--;
				fail(new PeerException("the peer client is closed: no batch call to " + this.peer));
				return;
			}
			BatchCallHandler connection = new BatchCallHandler(BatchConnections.this.maxAnswer);
			ChannelFuture connecting = new Bootstrap().group(this.loop.loop)
				.channel(BatchConnections.this.channelClass)
				.option(ChannelOption.CONNECT_TIMEOUT_MILLIS, BatchConnections.this.connectTimeoutMillis)
				.option(ChannelOption.TCP_NODELAY, true)
				.handler(new ChannelInitializer<Channel>() {
					@Override
					protected void initChannel(Channel channel) {
						channel.pipeline().addLast(new HttpClientCodec(), connection);
					}
				})
				.connect(address);
			Channel channel = connecting.channel();
			// On the loop, at once when the loop closes it: a connection closed for a
			// cancelled call no longer counts when the next call looks.
			channel.closeFuture().addListener((closed) -> {
				this.connections.open--;
				this.connections.idle.remove(connection);
			});
			BatchConnections.this.all.add(channel);
			if (BatchConnections.this.closed) {
				channel.close();
			}
			connecting.addListener((ChannelFuture future) -> {
				if (!future.isSuccess()) {
					// The channel is closed after a failed connect, which counts it out.
					fail(future.cause());
				}
				else if (this.done) {
					this.connections.release(connection);
				}
				else {
					send(connection);
				}
			});
		}

		private void send(BatchCallHandler connection) {
			if (this.done) {
				this.connections.release(connection);
				return;
			}
			this.connection = connection;
			connection.begin(this, request());
		}

		private FullHttpRequest request() {
			FullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST,
					InternalApi.BATCH_PATH, Unpooled.wrappedBuffer(this.body));
			HttpHeaders headers = request.headers();
			headers.set(HttpHeaderNames.HOST, this.peer.url().getAuthority());
			headers.set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_OCTET_STREAM);
			headers.setInt(HttpHeaderNames.CONTENT_LENGTH, this.body.length);
			headers.set(InternalApi.SECRET, BatchConnections.this.secret);
			return request;
		}

		@Override
		public void answered(BatchCallHandler connection, int status, byte[] answer, boolean keepAlive) {
			this.connection = null;
			if (keepAlive && !BatchConnections.this.closed) {
				this.connections.release(connection);
			}
			else {
				connection.channel().close();
			}
			if (status == 200) {
				if (!this.done) {
					this.done = true;
					this.sink.success(answer);
				}
			}
			else {
				String text = new String(answer, StandardCharsets.UTF_8).strip();
				fail(new PeerException("replica answered " + status + ": " + text));
			}
		}

		@Override
		public void failed(BatchCallHandler connection, Throwable error, boolean beforeAnswer) {
			this.connection = null;
			if (beforeAnswer && connection.wasReused() && !this.retried && !this.done
					&& !BatchConnections.this.closed) {
				// The peer closed an idle connection as the call reached it: once more
				// on a new one.
				this.retried = true;
				connect();
				return;
			}
			fail(error);
		}

		private void cancel() {
			if (this.done) {
				return;
			}
			this.done = true;
			BatchCallHandler current = this.connection;
			if (current != null) {
				this.connection = null;
				current.abandon();
			}
		}

		private void fail(Throwable error) {
			if (!this.done) {
				this.done = true;
				this.sink.error(error);
			}
		}

	}

	private static InetSocketAddress address(byte[] literal, String host, int port) {
		try {
			return new InetSocketAddress(InetAddress.getByAddress(host, literal), port);
		}
		catch (UnknownHostException ex) {
			// An address of 4 or 16 bytes is never refused.
			throw new IllegalStateException(ex);
		}
	}

}
