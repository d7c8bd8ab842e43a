package io.quorumkv.service.paxos;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.RingLayout.Targets;
import io.quorumkv.service.paxos.Messages.Promise;
import io.quorumkv.service.paxos.Messages.Vote;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * A deterministic network of three acceptors for the protocol's tests: every message is
 * an event in one queue, run one at a time in an order a seeded random picks (so messages
 * are reordered), lost with {@code loss} (the sender then sees a timeout, later), and
 * delivered twice with {@code duplication}. Each node's storage keeps the greatest entry
 * per key, as a real one does. Everything runs on the test's thread.
 */
final class SimulatedNetwork implements Network {

	static final int NODES = 3;

	private final Random random;

	private final double loss;

	private final double duplication;

	private final List<Runnable> events = new ArrayList<>();

	private final List<Node> nodes = new ArrayList<>();

	private final List<Acceptor> acceptors = new ArrayList<>();

	private final List<Map<ByteBuffer, Entry>> stores = new ArrayList<>();

	private long steps;

	SimulatedNetwork(long seed, double loss, double duplication) {
		this.random = new Random(seed);
		this.loss = loss;
		this.duplication = duplication;
		for (int i = 0; i < NODES; i++) {
			Map<ByteBuffer, Entry> store = new HashMap<>();
			this.stores.add(store);
			this.nodes.add(Node.of("n" + i, "http://127.0.0.1:" + (9000 + i)));
			this.acceptors.add(new Acceptor(AcceptorTable.inMemory(1000, 1 << 20, 1024),
					(key) -> Mono.justOrEmpty(store.get(ByteBuffer.wrap(key))), (micros) -> true, () -> this.steps,
					1 << 20));
		}
	}

	/** Virtual time: one step per event run. */
	long steps() {
		return this.steps;
	}

	Acceptor acceptor(int node) {
		return this.acceptors.get(node);
	}

	/** What node {@code node}'s storage holds for {@code key}. */
	Entry stored(int node, String key) {
		return this.stores.get(node).get(ByteBuffer.wrap(key.getBytes(StandardCharsets.UTF_8)));
	}

	void later(Runnable event) {
		this.events.add(event);
	}

	/** Runs events in a random order until none is left, at most {@code max}. */
	void run(long max) {
		while (!this.events.isEmpty() && this.steps < max) {
			Runnable event = this.events.remove(this.random.nextInt(this.events.size()));
			this.steps++;
			event.run();
		}
		if (!this.events.isEmpty()) {
			throw new AssertionError("still " + this.events.size() + " events after " + max + " steps");
		}
	}

	@Override
	public Targets acceptors(byte[] key) {
		byte[] flags = new byte[NODES];
		java.util.Arrays.fill(flags, (byte) (Targets.OLD | Targets.NEW));
		return new Targets(this.nodes, flags, NODES);
	}

	@Override
	public Mono<Promise> prepare(Node acceptor, Ballot ballot, byte[] key) {
		Acceptor target = this.acceptors.get(this.nodes.indexOf(acceptor));
		return send(() -> target.prepare(ballot, key));
	}

	@Override
	public Mono<Vote> propose(Node acceptor, Proposal proposal) {
		Acceptor target = this.acceptors.get(this.nodes.indexOf(acceptor));
		return send(() -> target.propose(proposal));
	}

	@Override
	public Mono<Boolean> commit(Node acceptor, Ballot ballot, Entry entry) {
		Acceptor target = this.acceptors.get(this.nodes.indexOf(acceptor));
		return send(() -> target.commit(ballot, entry.key(), entry.timestamp()));
	}

	@Override
	public Mono<Void> store(Entry entry) {
		return Mono.create((sink) -> {
			AtomicInteger acks = new AtomicInteger();
			AtomicInteger failures = new AtomicInteger();
			for (Map<ByteBuffer, Entry> store : this.stores) {
				later(() -> {
					if (this.random.nextDouble() < this.loss) {
						if (failures.incrementAndGet() == 2) {
							sink.error(new TimeoutException("write lost"));
						}
						return;
					}
					store.merge(ByteBuffer.wrap(entry.key()), entry, (a, b) -> EntryOrder.max(a, b));
					if (acks.incrementAndGet() == 2) {
						sink.success();
					}
				});
			}
		});
	}

	/** A pause: just another event, run in the random order. */
	Mono<Void> sleep() {
		return Mono.create((sink) -> later(sink::success));
	}

	/**
	 * A request and its answer as events: either may be lost (the sender's timeout is
	 * then an event of its own) and the request may arrive twice.
	 */
	private <T> Mono<T> send(java.util.function.Supplier<Mono<T>> handler) {
		return Mono.create((MonoSink<T> sink) -> {
			later(() -> deliver(handler, sink));
			if (this.random.nextDouble() < this.duplication) {
				later(() -> deliver(handler, sink));
			}
		});
	}

	private <T> void deliver(java.util.function.Supplier<Mono<T>> handler, MonoSink<T> sink) {
		if (this.random.nextDouble() < this.loss) {
			later(() -> sink.error(new TimeoutException("request lost")));
			return;
		}
		handler.get().subscribe((answer) -> later(() -> {
			if (this.random.nextDouble() < this.loss) {
				sink.error(new TimeoutException("answer lost"));
			}
			else {
				sink.success(answer);
			}
		}), (error) -> later(() -> sink.error(error)));
	}

}
