package io.quorumkv.service.peer;

import java.net.URI;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.netty.util.concurrent.EventExecutor;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.RingStamp;
import io.quorumkv.service.peer.ReplicaStreams.Links;
import io.quorumkv.service.peer.StreamFrames.Result;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * One exchange of a replica stream ({@link PeerStream}): a {@code POST} through the one
 * {@link WebClient} whose request body is the operations' frames, sent as they come, and
 * whose answer is the results' frames. What happens to it (opened, a buffer of results,
 * its end) is told to its stream on the stream's loop.
 */
final class Exchange {

	/** The header of the ring a call is made under ({@link RingStamp}). */
	static final String RING_HEADER = "X-QuorumKV-Ring";

	/** What an exchange tells its stream, always on the stream's loop. */
	interface Events {

		/**
		 * The peer accepted the stream; {@code stamp} is its ring stamp, if it sent one.
		 */
		void opened(Exchange exchange, @Nullable String stamp);

		/** A buffer of the answer, to be released by the receiver. */
		void received(Exchange exchange, DataBuffer buffer);

		/** The exchange ended: refused, broken, or ended by the peer. */
		void ended(Exchange exchange, Throwable error);

	}

	private final Sinks.Many<DataBuffer> out = Sinks.many().unicast().onBackpressureBuffer();

	private final FrameAssembler in;

	private final int maxFrameSize;

	private final EventExecutor loop;

	private boolean opened;

	private @Nullable ScheduledFuture<?> heartbeat;

	private Disposable subscription = () -> {
	};

	private Exchange(int maxFrameSize, EventExecutor loop) {
		this.in = new FrameAssembler(maxFrameSize);
		this.maxFrameSize = maxFrameSize;
		this.loop = loop;
	}

	/**
	 * Opens an exchange with {@code peer} at {@code uri}, stamped with this node's ring.
	 */
	static Exchange open(WebClient client, URI uri, Node peer, Links links, int maxFrameSize, EventExecutor loop,
			Events events) {
		Exchange exchange = new Exchange(maxFrameSize, loop);
		exchange.subscription = client.post().uri(uri).headers((headers) -> {
			String stamp = links.stamp();
			if (stamp != null) {
				headers.set(RING_HEADER, stamp);
			}
		})
			.contentType(MediaType.APPLICATION_OCTET_STREAM)
			.body(BodyInserters.fromDataBuffers(exchange.out.asFlux()))
			.exchangeToFlux((response) -> {
				if (response.statusCode().value() == 200) {
					String stamp = response.headers().asHttpHeaders().getFirst(RING_HEADER);
					exchange.onLoop(() -> events.opened(exchange, stamp), () -> {
					});
					return response.bodyToFlux(DataBuffer.class);
				}
				return refused(response, peer, links).flux();
			})
			.subscribe(
					(buffer) -> exchange.onLoop(() -> events.received(exchange, buffer),
							() -> DataBufferUtils.release(buffer)),
					(error) -> exchange.onLoop(() -> events.ended(exchange, error), () -> {
					}), () -> exchange
						.onLoop(() -> events.ended(exchange, new PeerException(peer + " ended the stream")), () -> {
						}));
		return exchange;
	}

	private static Mono<DataBuffer> refused(ClientResponse response, Node peer, Links links) {
		int status = response.statusCode().value();
		String stamp = response.headers().asHttpHeaders().getFirst(RING_HEADER);
		return response.bodyToMono(String.class).defaultIfEmpty("").flatMap((body) -> {
			String message = peer + " refused the stream: " + status + " " + body.strip();
			if (status == 409 && stamp != null) {
				newerRing(stamp, peer, links);
				return Mono.error(new StaleRingException(message));
			}
			return Mono.error(new PeerException(message));
		});
	}

	boolean isOpened() {
		return this.opened;
	}

	/**
	 * The peer accepted the stream: {@code beat} runs every {@code every} until it ends.
	 */
	void markOpened(Duration every, Runnable beat) {
		this.opened = true;
		this.heartbeat = this.loop.scheduleAtFixedRate(beat, every.toNanos(), every.toNanos(), TimeUnit.NANOSECONDS);
	}

	/**
	 * Hands each result that {@code buffer} completes to {@code result}; releases
	 * {@code buffer}.
	 * @throws EntryFrame.MalformedFrameException when a frame is malformed or too long
	 */
	void results(DataBuffer buffer, int maxKeySize, Consumer<Result> result) {
		this.in.feed(buffer, (frame) -> result.accept(StreamResults.read(frame, maxKeySize, this.maxFrameSize)));
	}

	/** Tells {@code links} of the peer's ring {@code stamp} when it is newer. */
	static void newerRing(@Nullable String stamp, Node peer, Links links) {
		if (stamp != null) {
			long epoch = RingStamp.epochOf(stamp);
			if (epoch > links.epoch()) {
				links.newerRing(peer, stamp, epoch);
			}
		}
	}

	/** Sends a chunk of operation frames; false when it could not be sent. */
	Sinks.EmitResult send(DataBuffer chunk) {
		return this.out.tryEmitNext(chunk);
	}

	/** Ends the request body: the peer answers what it has and ends the answer. */
	void complete() {
		stopHeartbeat();
		this.out.tryEmitComplete();
	}

	/** Drops the exchange: its connection closes. */
	void dispose() {
		stopHeartbeat();
		this.subscription.dispose();
	}

	private void stopHeartbeat() {
		if (this.heartbeat != null) {
			this.heartbeat.cancel(false);
			this.heartbeat = null;
		}
	}

	/** Runs {@code task} on the stream's loop; {@code orElse} when the loop is gone. */
	private void onLoop(Runnable task, Runnable orElse) {
		if (this.loop.inEventLoop()) {
			task.run();
			return;
		}
		try {
			this.loop.execute(task);
		}
		catch (RejectedExecutionException ex) {
			orElse.run();
		}
	}

}
