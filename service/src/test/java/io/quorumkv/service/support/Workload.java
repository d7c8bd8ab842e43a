package io.quorumkv.service.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/**
 * Client threads writing and deleting their own keys through the public API until
 * stopped, recording every answer in a {@link Ledger}. Thread {@code t} owns the keys
 * {@code prefix-t-0 .. prefix-t-(keys-1)}; each operation is a PUT of a fresh value (four
 * in five) or a DELETE, at {@code replicas}. When a node does not answer at all the
 * thread moves on to the next of its nodes (a client failing over).
 */
public final class Workload implements AutoCloseable {

	private final List<Thread> threads = new ArrayList<>();

	private final AtomicBoolean running = new AtomicBoolean(true);

	private final Ledger ledger;

	/**
	 * @param nodesOfThread the base URLs a thread uses, in order of preference
	 */
	public Workload(Ledger ledger, String prefix, int threadCount, int keys, String replicas,
			IntFunction<List<String>> nodesOfThread, long seed, Duration requestTimeout) {
		this(ledger, prefix, threadCount, keys, replicas, (t) -> () -> nodesOfThread.apply(t), seed, requestTimeout,
				false);
	}

	/**
	 * Client threads that each send every operation to the next node of a list that may
	 * change (the cluster's live nodes, as they join and leave): load through every node.
	 */
	public static Workload rotating(Ledger ledger, String prefix, int threadCount, int keys, String replicas,
			Supplier<List<String>> nodes, long seed, Duration requestTimeout) {
		return new Workload(ledger, prefix, threadCount, keys, replicas, (t) -> nodes, seed, requestTimeout, true);
	}

	private Workload(Ledger ledger, String prefix, int threadCount, int keys, String replicas,
			IntFunction<Supplier<List<String>>> nodesOfThread, long seed, Duration requestTimeout, boolean rotate) {
		this.ledger = ledger;
		for (int t = 0; t < threadCount; t++) {
			int thread = t;
			Supplier<List<String>> live = nodesOfThread.apply(t);
			Random random = new Random(seed + t);
			KvClient client = new KvClient(requestTimeout);
			this.threads.add(Thread.ofPlatform().name("workload-" + t).start(() -> {
				int node = 0;
				long sequence = 0;
				while (this.running.get()) {
					String key = prefix + "-" + thread + "-" + random.nextInt(keys);
					List<String> nodes = live.get();
					String base = nodes.get((rotate ? node++ + thread : node) % nodes.size());
					boolean delete = random.nextInt(5) == 0;
					int status;
					String value = null;
					long sent = System.nanoTime();
					if (delete) {
						status = client.delete(base, key, replicas);
					}
					else {
						value = key + "#" + (sequence++);
						status = client.put(base, key, value, replicas);
					}
					boolean acked = status == (delete ? 202 : 201);
					this.ledger.record(key, value, acked, sent);
					this.ledger.answered(status);
					if (status == -1) {
						node++;
					}
					else if (status == 503) {
						this.ledger.rejected.incrementAndGet();
					}
					if (!acked) {
						// don't spin on a dead node
						sleep(20);
					}
				}
			}));
		}
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/** Stops the threads after their current request; waits for them. */
	@Override
	public void close() {
		this.running.set(false);
		for (Thread thread : this.threads) {
			try {
				thread.join(30_000);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

}
