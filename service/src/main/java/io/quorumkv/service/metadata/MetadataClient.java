package io.quorumkv.service.metadata;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingJson;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.protocol.exceptions.RaftRetryFailureException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.TimeDuration;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * This node's Raft client of the metadata group: linearizable reads of the log's ring and
 * proposals of ring commands. It is made again when the ring's peers change, and learns
 * the leader by itself from any peer it reaches. Ratis' calls run on the metadata
 * scheduler, never on an event loop.
 */
final class MetadataClient implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(MetadataClient.class);

	/**
	 * Attempts of one client request, 200 ms apart (each under the request timeout): an
	 * election after a leader's death takes a few seconds.
	 */
	private static final int RETRIES = 60;

	private final RaftTransport transport;

	private final Supplier<Optional<Ring>> ring;

	private final Supplier<RaftProperties> properties;

	private final Scheduler scheduler;

	private final Duration timeout;

	private @Nullable RaftClient client;

	private List<RaftPeer> clientPeers = List.of();

	private @Nullable RaftGroupId clientGroup;

	/**
	 * @param ring the ring whose nodes are the group's peers (the log's, or this node's
	 * before it has applied one)
	 * @param timeout how long a read or a proposal may take, retries included
	 */
	MetadataClient(RaftTransport transport, Supplier<Optional<Ring>> ring, Supplier<RaftProperties> properties,
			Scheduler scheduler, Duration timeout) {
		this.transport = transport;
		this.ring = ring;
		this.properties = properties;
		this.scheduler = scheduler;
		this.timeout = timeout;
	}

	/** The log's ring, read through the leader (linearizable); empty before the first. */
	Mono<Optional<Ring>> read() {
		return Mono.defer(() -> {
			RaftClient used = client();
			return Mono.fromFuture(watched(used, () -> used.async().sendReadOnly(Message.EMPTY)));
		}).subscribeOn(this.scheduler).map((reply) -> {
			failIfNotSuccess(reply);
			String json = reply.getMessage().getContent().toStringUtf8();
			return "null".equals(json) ? Optional.<Ring>empty() : Optional.of(RingJson.read(json));
		}).timeout(this.timeout, this.scheduler);
	}

	/** Appends {@code command} to the log; completes with what applying it did. */
	Mono<RingCommand.Outcome> submit(RingCommand command) {
		byte[] bytes = command.toBytes();
		return Mono.defer(() -> {
			RaftClient used = client();
			return Mono.fromFuture(watched(used, () -> used.async().send(Message.valueOf(ByteString.copyFrom(bytes)))));
		}).subscribeOn(this.scheduler).map((reply) -> {
			failIfNotSuccess(reply);
			return RingCommand.Outcome.read(reply.getMessage().getContent().toByteArray());
		}).timeout(this.timeout, this.scheduler);
	}

	/**
	 * The reply of a call made with {@code used}: when it fails because Ratis gave the
	 * request up (its attempts ran out) or had closed the client, the client is dropped,
	 * and the next call makes a new one. Ratis closes a client's ordered window for good
	 * once one request runs out of attempts, and may do so after this call's own timeout
	 * has answered: so it is watched on the reply itself.
	 */
	private CompletableFuture<RaftClientReply> watched(RaftClient used,
			Supplier<CompletableFuture<RaftClientReply>> call) {
		CompletableFuture<RaftClientReply> reply;
		try {
			reply = call.get();
		}
		catch (RuntimeException ex) {
			reply = CompletableFuture.failedFuture(ex);
		}
		reply.whenComplete((answer, error) -> {
			if (error != null && givenUp(error)) {
				// Not on Ratis' own thread, which closing the client stops.
				this.scheduler.schedule(() -> drop(used, error));
			}
		});
		return reply;
	}

	private static boolean givenUp(Throwable error) {
		int depth = 0;
		for (Throwable cause = error; cause != null && depth < 8; cause = cause.getCause(), depth++) {
			if (cause instanceof RaftRetryFailureException || cause instanceof AlreadyClosedException) {
				return true;
			}
		}
		return false;
	}

	private synchronized void drop(RaftClient used, Throwable error) {
		if (this.client != used) {
			return;
		}
		logger.warn("The metadata group's client gave a request up (" + error.getMessage()
				+ "); the next request makes a new one");
		closeQuietly(used);
		this.client = null;
		this.clientPeers = List.of();
		this.clientGroup = null;
	}

	private static void failIfNotSuccess(RaftClientReply reply) {
		if (!reply.isSuccess()) {
			throw new IllegalStateException("the metadata log did not take the request: "
					+ ((reply.getException() != null) ? reply.getException().getMessage() : "no reason given"));
		}
	}

	/** The client for the ring's peers of now. */
	synchronized RaftClient client() {
		Ring current = this.ring.get().orElse(null);
		if (current == null) {
			throw new IllegalStateException("this node has no ring: it is not a member of a metadata group");
		}
		List<RaftPeer> peers = GroupPeers.peers(current);
		RaftGroupId group = GroupGenerations.groupId(current);
		RaftClient made = this.client;
		if (made != null && peers.equals(this.clientPeers) && group.equals(this.clientGroup)) {
			return made;
		}
		if (made != null) {
			closeQuietly(made);
		}
		made = RaftClient.newBuilder()
			.setRaftGroup(RaftGroup.valueOf(group, peers))
			.setProperties(this.properties.get())
			.setClientRpc(new HttpClientRpc(this.transport))
			.setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(RETRIES,
					TimeDuration.valueOf(200, TimeUnit.MILLISECONDS)))
			.build();
		this.client = made;
		this.clientPeers = peers;
		this.clientGroup = group;
		return made;
	}

	@Override
	public synchronized void close() {
		RaftClient made = this.client;
		if (made != null) {
			closeQuietly(made);
			this.client = null;
			this.clientPeers = List.of();
		}
	}

	private static void closeQuietly(RaftClient client) {
		try {
			client.close();
		}
		catch (IOException ex) {
			logger.debug("Closing a Raft client: " + ex.getMessage());
		}
	}

}
