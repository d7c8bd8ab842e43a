package io.quorumkv.service.peer;

import java.nio.ByteBuffer;
import java.util.Optional;

import io.quorumkv.service.cluster.Node;

import io.quorumkv.service.peer.ReplicaStreams.Callback;
import io.quorumkv.service.peer.ReplicaStreams.Links;
import io.quorumkv.service.peer.StreamFrames.Result;
import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;

/**
 * One operation on a replica stream, from its submission to its one answer. Owned by its
 * stream's loop: no field is touched from another thread.
 */
abstract sealed class StreamOperation
		permits StreamOperation.Get, StreamOperation.Upsert, StreamOperation.Ping, StreamOperation.Call {

	final byte kind;

	final byte[] key;

	final @Nullable Entry entry;

	/** The feature of a call, and its message (empty for the other kinds). */
	final byte service;

	final byte[] payload;

	int id;

	long startNanos;

	/** Tried even while the peer's breaker is open or its stream waits out a backoff. */
	boolean probe;

	/** Answered (or failed): nothing more happens to it. */
	boolean done;

	StreamOperation(byte kind, byte[] key, @Nullable Entry entry) {
		this(kind, key, entry, (byte) 0, StreamFrames.Operation.NO_KEY);
	}

	StreamOperation(byte kind, byte[] key, @Nullable Entry entry, byte service, byte[] payload) {
		this.kind = kind;
		this.key = key;
		this.entry = entry;
		this.service = service;
		this.payload = payload;
	}

	final int size() {
		return StreamFrames.operationSize(this.kind, this.key, this.entry, this.payload);
	}

	final void encode(ByteBuffer out, long epoch, int budgetMillis) {
		StreamFrames.putOperation(out, this.id, this.kind, epoch, budgetMillis, this.key, this.entry, this.service,
				this.payload);
	}

	/** The operation's name in metrics. */
	abstract String name();

	/**
	 * Answers with the peer's result (a result that is a failure fails it); the stream
	 * has already checked the result's type for this kind.
	 */
	abstract void answer(Result result);

	abstract void fail(Throwable error);

	/** Whether {@code type} answers an operation of this kind. */
	abstract boolean accepts(byte type);

	/** Answers with {@code result}; a failing subscriber is logged, not thrown. */
	final void deliver(Result result) {
		try {
			answer(result);
		}
		catch (RuntimeException ex) {
			LoggerHolder.logger.error("A replica operation's subscriber failed on its answer", ex);
		}
	}

	/** Fails with {@code error}; a failing subscriber is logged, not thrown. */
	final void deliver(Throwable error) {
		try {
			fail(error);
		}
		catch (RuntimeException ex) {
			LoggerHolder.logger.error("A replica operation's subscriber failed on its failure", ex);
		}
	}

	private static final class LoggerHolder {

		static final org.slf4j.Logger logger = org.slf4j.LoggerFactory.getLogger(StreamOperation.class);

	}

	static final class Get extends StreamOperation {

		private final Callback<Optional<Entry>> callback;

		Get(byte[] key, Callback<Optional<Entry>> callback) {
			super(StreamFrames.GET, key, null);
			this.callback = callback;
		}

		@Override
		String name() {
			return "get";
		}

		@Override
		boolean accepts(byte type) {
			return type == StreamFrames.FOUND || type == StreamFrames.ABSENT;
		}

		@Override
		void answer(Result result) {
			this.callback.answered(Optional.ofNullable(result.entry()));
		}

		@Override
		void fail(Throwable error) {
			this.callback.failed(error);
		}

	}

	static final class Upsert extends StreamOperation {

		private final Callback<Void> callback;

		Upsert(Entry entry, Callback<Void> callback) {
			super(StreamFrames.UPSERT, entry.key(), entry);
			this.callback = callback;
		}

		@Override
		String name() {
			return "upsert";
		}

		@Override
		boolean accepts(byte type) {
			return type == StreamFrames.KEPT;
		}

		@Override
		void answer(Result result) {
			this.callback.answered(null);
		}

		@Override
		void fail(Throwable error) {
			this.callback.failed(error);
		}

	}

	/** A heartbeat: keeps the stream open and samples the peer's clock. */
	static final class Ping extends StreamOperation {

		private final Callback<Long> callback;

		Ping(Callback<Long> callback) {
			super(StreamFrames.PING, StreamFrames.Operation.NO_KEY, null);
			this.callback = callback;
		}

		/** A heartbeat whose answer is a sample of {@code peer}'s clock. */
		static Ping clockSample(Node peer, Links links) {
			long sent = links.wallMicros();
			return new Ping(new Callback<>() {

				@Override
				public void answered(Long peerMicros) {
					links.clockSample(peer, sent, links.wallMicros(), peerMicros);
				}

				@Override
				public void failed(Throwable error) {
					// A missed heartbeat ends the stream (expire); nothing more to do.
				}

			});
		}

		@Override
		String name() {
			return "ping";
		}

		@Override
		boolean accepts(byte type) {
			return type == StreamFrames.PONG;
		}

		@Override
		void answer(Result result) {
			this.callback.answered(result.number());
		}

		@Override
		void fail(Throwable error) {
			this.callback.failed(error);
		}

	}

	/**
	 * A feature's message ({@link StreamFrames#CALL}): its payload goes to the peer's
	 * {@link StreamService} for {@code service}, whose answer comes back as the payload
	 * of a {@link StreamFrames#REPLY}. The transport reads neither.
	 */
	static final class Call extends StreamOperation {

		private final Callback<byte[]> callback;

		Call(byte service, byte[] payload, Callback<byte[]> callback) {
			super(StreamFrames.CALL, StreamFrames.Operation.NO_KEY, null, service, payload);
			this.callback = callback;
		}

		@Override
		String name() {
			return "call";
		}

		@Override
		boolean accepts(byte type) {
			return type == StreamFrames.REPLY;
		}

		@Override
		void answer(Result result) {
			this.callback.answered(result.payload());
		}

		@Override
		void fail(Throwable error) {
			this.callback.failed(error);
		}

	}

}
