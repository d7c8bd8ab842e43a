package io.quorumkv.service.membership;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.RingChange;
import io.quorumkv.service.cluster.RingLayout;
import io.quorumkv.service.membership.TransferProgress.Source;
import io.quorumkv.service.peer.PeerClient;
import io.quorumkv.storage.Storage;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/**
 * The target side of a change's streaming phase: this node pulls the keys it gains from
 * each of its sources ({@link TransferPlan}), one stream per source through the one peer
 * transport ({@code GET /internal/v0/transfer}), at most {@code stream-sources} of them
 * at once (the others start as those end), with backpressure down to the source's storage
 * scan and at a rate limit shared by all its streams. Entries are written in batches
 * ({@link Storage#upsertAll}); every checkpoint interval they are made durable and each
 * stream's cursor is recorded ({@link TransferProgress}), so a stream broken by a restart
 * of either end resumes after its cursor. A stream that fails is retried with backoff
 * until it completes or the ring moves on. This class decides which streams run; one
 * stream's receiving and writing is {@link TransferStream}, the record of how far they
 * have come {@link TransferLedger}.
 */
public final class Transfers implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(Transfers.class);

	/**
	 * Failed attempts in a row after which a source is given up on (about 9 s of backoff
	 * for a source that refuses connections): its share comes from the other sources.
	 */
	private static final int FAILOVER_AFTER = 6;

	private final ClusterState state;

	private final MembershipProperties settings;

	private final TransferLedger ledger;

	private final TransferStream streams;

	private final Map<String, Disposable> running = new ConcurrentHashMap<>();

	/** Sources given up on in the change under way: their share comes from the others. */
	private final Set<String> failedOver = ConcurrentHashMap.newKeySet();

	Transfers(ClusterState state, PeerClient peers, Storage storage, Path folder, MembershipProperties settings,
			int maxFrameSize, MeterRegistry meters) {
		this.state = state;
		this.settings = settings;
		this.ledger = new TransferLedger(storage, folder, settings);
		this.streams = new TransferStream(peers, storage, this.ledger, settings, maxFrameSize, meters);
		state.onChange((ring) -> reconcile());
	}

	/**
	 * Starts (or stops) this node's streams to match the ring: called on start and on
	 * every new ring.
	 */
	synchronized void reconcile() {
		RingLayout layout = this.state.layout();
		RingChange change = (layout != null) ? layout.ring().change() : null;
		String self = this.state.self().id();
		if (change == null || change.phase() != RingChange.Phase.STREAMING) {
			stopAll();
			return;
		}
		TransferPlan plan = new TransferPlan(layout);
		if (plan.targets().stream().noneMatch((node) -> node.id().equals(self))) {
			stopAll();
			return;
		}
		TransferProgress current = this.ledger.current();
		if (current == null || !current.change().equals(change.id())) {
			stopAll();
			current = this.ledger.begin(change.id());
		}
		else {
			this.ledger.resumeClock(current);
		}
		List<Node> sources = plan.sources(self);
		for (Node source : sources) {
			Source done = current.sources().getOrDefault(source.id(), Source.FRESH);
			if (done.done()) {
				continue;
			}
			if (this.failedOver.contains(source.id())) {
				substitute(change.id(), current, source, sources);
				continue;
			}
			if (this.running.size() >= this.settings.streamSources()) {
				break;
			}
			if (!this.running.containsKey(source.id())) {
				logger.info("Pulling the keys of change " + change.id() + " from " + source
						+ ((done.cursor() != null) ? " (resuming after " + done.keys() + " keys)" : ""));
				this.running.put(source.id(), pull(change.id(), source, null, source.id()));
			}
		}
	}

	/**
	 * Pulls what the unreachable {@code dead} owes this node from every other source,
	 * each sending the keys of which it holds a copy; once all those streams are
	 * complete, the dead source's share is.
	 */
	private void substitute(String changeId, TransferProgress current, Node dead, List<Node> sources) {
		boolean all = true;
		for (Node other : sources) {
			if (other.id().equals(dead.id()) || this.failedOver.contains(other.id())) {
				continue;
			}
			String id = dead.id() + "@" + other.id();
			if (current.sources().getOrDefault(id, Source.FRESH).done()) {
				continue;
			}
			all = false;
			if (!this.running.containsKey(id) && this.running.size() < this.settings.streamSources()) {
				logger
					.info("Pulling the keys of change " + changeId + " that " + dead + " owes this node from " + other);
				this.running.put(id, pull(changeId, other, dead.id(), id));
			}
		}
		if (all && !this.running.containsKey(dead.id())) {
			// In the map before it starts: the record may complete before subscribe
			// returns.
			Disposable.Swap slot = reactor.core.Disposables.swap();
			this.running.put(dead.id(), slot);
			slot.update(this.ledger.finish(changeId, dead.id()).subscribe(null, (error) -> {
				this.running.remove(dead.id(), slot);
				logger.warn("Recording the share of " + dead + " complete failed: " + error.getMessage());
			}, () -> {
				this.running.remove(dead.id(), slot);
				reconcile();
			}));
		}
	}

	/** Gives up on a source that stays unreachable: its share comes from the others. */
	private synchronized void failOver(String changeId, Node source) {
		if (!this.ledger.isFor(changeId) || !this.failedOver.add(source.id())) {
			return;
		}
		logger.warn("Source " + source + " of change " + changeId + " stays unreachable: pulling its share from the "
				+ "other sources");
		Disposable pull = this.running.remove(source.id());
		if (pull != null) {
			pull.dispose();
		}
		reconcile();
	}

	private void stopAll() {
		this.running.values().forEach(Disposable::dispose);
		this.running.clear();
		this.failedOver.clear();
	}

	private Disposable pull(String changeId, Node source, @Nullable String onBehalfOf, String id) {
		return Flux.defer(() -> this.streams.open(changeId, source, onBehalfOf, id))
			.retryWhen(Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(200))
				.maxBackoff(Duration.ofSeconds(3))
				.doBeforeRetry((signal) -> {
					logger.info("Transfer from " + source + " interrupted (" + signal.failure().getMessage()
							+ "); resuming from its cursor");
					if (onBehalfOf == null && signal.totalRetries() + 1 >= FAILOVER_AFTER) {
						Schedulers.boundedElastic().schedule(() -> failOver(changeId, source));
					}
				}))
			.then(this.ledger.finish(changeId, id))
			.subscribe(null, (error) -> logger.warn("Transfer from " + source + " stopped: " + error.getMessage()),
					() -> {
						this.running.remove(id);
						reconcile();
					});
	}

	/**
	 * This node's part in the change under way: whether it receives keys, and how far
	 * each stream has come; {@code done} once every stream is complete and durable
	 * ({@link TransferStatus}).
	 */
	public Map<String, Object> status() {
		return this.ledger.status(this.state);
	}

	@Override
	public void close() {
		this.ledger.stopping();
		stopAll();
		this.ledger.close();
		this.streams.close();
	}

}
