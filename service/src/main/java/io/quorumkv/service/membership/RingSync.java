package io.quorumkv.service.membership;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.cluster.RingJson;
import io.quorumkv.service.cluster.RingStamp;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.service.peer.PeerClient;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;

/**
 * Ring exchange: a node that meets a peer with a newer epoch (in a call it serves or in
 * an answer it gets) fetches that peer's ring ({@code GET /internal/v0/ring}, through the
 * one peer transport) and adopts it. One fetch per target epoch is under way at a time.
 *
 * <p>
 * Only rings of this node's cluster are adopted, and a node without a ring (a newcomer)
 * adopts only a ring that lists it as a member: the one its join was agreed in.
 */
public final class RingSync {

	private static final Log logger = LogFactory.getLog(RingSync.class);

	private final ClusterState state;

	private final PeerClient peers;

	private final Duration timeout;

	private final Map<Long, Mono<Void>> fetches = new ConcurrentHashMap<>();

	/**
	 * By peer URL, the highest epoch it announced whose ring was of an older metadata
	 * generation than this node's: a voter fenced by a forced reconfiguration that came
	 * back with a log that went on. Its announcements up to that epoch are not fetched
	 * again (it keeps making them, every few seconds); one entry per peer met.
	 */
	private final Map<String, Long> olderGeneration = new ConcurrentHashMap<>();

	private volatile java.util.function.Function<Ring, Mono<Void>> beforeFirstRing = (ring) -> Mono.empty();

	RingSync(ClusterState state, PeerClient peers, Duration timeout) {
		this.state = state;
		this.peers = peers;
		this.timeout = timeout;
	}

	/**
	 * Completes once this node's epoch is at least {@code epoch}, fetching the ring from
	 * {@code from}; fails when the peer cannot give a ring that new.
	 */
	public Mono<Void> catchUp(Node from, long epoch) {
		if (this.state.epoch() >= epoch) {
			return Mono.empty();
		}
		Long refused = this.olderGeneration.get(from.url().toString());
		if (refused != null && refused >= epoch) {
			return Mono.error(new OlderGeneration("peer " + from + " serves a ring of an older metadata generation"
					+ " (epoch " + refused + "): not fetched again"));
		}
		return this.fetches.computeIfAbsent(epoch, (e) -> fetch(from).flatMap((ring) -> {
			if (ring.epoch() < epoch) {
				return Mono.error(new IllegalStateException(
						"peer " + from + " announced epoch " + epoch + " but serves " + ring.epoch()));
			}
			return adopt(ring, from);
		}).doFinally((signal) -> this.fetches.remove(e)).cache()).onErrorResume((error) -> {
			if (error instanceof OlderGeneration) {
				boolean first = this.olderGeneration.put(from.url().toString(), epoch) == null;
				if (first) {
					logger.warn("Not catching up from " + from + ": " + error.getMessage()
							+ "; its announcements of epochs up to " + epoch + " are ignored from now on");
				}
				else if (logger.isDebugEnabled()) {
					logger.debug("Not catching up from " + from + ": " + error.getMessage());
				}
				return Mono.error(error);
			}
			logger.warn("Could not catch up to epoch " + epoch + " from " + from + ": " + error.getMessage());
			return Mono.error(error);
		});
	}

	/**
	 * A peer's ring is of an older metadata generation than this node's: it never is
	 * taken, whatever its epoch ({@link ClusterState#install}).
	 */
	static final class OlderGeneration extends IllegalStateException {

		OlderGeneration(String message) {
			super(message);
		}

	}

	/** Runs before a node without a ring adopts its first one. */
	void beforeFirstRing(java.util.function.Function<Ring, Mono<Void>> hook) {
		this.beforeFirstRing = hook;
	}

	/** Called by the peer transport when a peer answers from a newer epoch. */
	void onNewerAnswer(Node peer, RingStamp stamp) {
		catchUp(stamp.node(), stamp.epoch()).subscribe(null, (error) -> {
		});
	}

	/** The ring a peer serves under. */
	public Mono<Ring> fetch(Node from) {
		return RingCalls.get(this.peers, from, InternalApi.RING_PATH, this.timeout).map((reply) -> {
			if (!reply.ok()) {
				throw new IllegalStateException(from + " answered " + reply.status() + ": " + reply.body());
			}
			return RingJson.read(reply.body());
		});
	}

	private Mono<Void> adopt(Ring ring, Node from) {
		Ring mine = this.state.ring().orElse(null);
		if (mine != null && !mine.clusterId().equals(ring.clusterId())) {
			return Mono.error(new IllegalStateException(
					"peer " + from + " is of cluster " + ring.clusterId() + ", this node of " + mine.clusterId()));
		}
		if (mine == null && !ring.isMember(this.state.self().id()) && ring.nodeAt(this.state.self().url()).isEmpty()) {
			return Mono.error(new IllegalStateException("peer " + from + " serves a ring of cluster " + ring.clusterId()
					+ " without this node: not adopted"));
		}
		if (mine != null && ring.generation().number() < mine.generation().number()) {
			return Mono
				.error(new OlderGeneration("peer " + from + " serves epoch " + ring.epoch() + " of metadata generation "
						+ ring.generation().number() + ", older than this node's " + mine.generation().number()
						+ " (a voter fenced by a forced reconfiguration: remove or replace it)"));
		}
		if (mine != null && ring.epoch() <= mine.epoch()) {
			// The ring came by another way (the metadata log) while it was fetched.
			return Mono.empty();
		}
		logger.info("Catching up from " + from + ": epoch " + this.state.epoch() + " -> " + ring.epoch());
		Mono<Void> before = (mine == null) ? this.beforeFirstRing.apply(ring).onErrorResume((error) -> Mono.empty())
				: Mono.empty();
		return before.then(this.state.install(ring)).then();
	}

}
