package io.quorumkv.service.nemesis;

import java.io.IOException;
import java.net.ConnectException;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import io.quorumkv.service.support.EntityCluster;
import org.jspecify.annotations.Nullable;

/**
 * Clients that increment one counter through every node by compare-and-set, as a client's
 * {@code update} does: each increment reads the counter ({@code GET}) and writes the next
 * count with {@code If-Match} on the version read; a 412 (another client got there first)
 * starts the increment again. Client {@code c} sends its {@code n}th attempt to the
 * {@code (c + n)}th node of the ring's members. Each value is
 * {@code count:client:attempt}, so every write is told apart.
 *
 * <p>
 * What the counter must come to ({@link Tally}). An increment answered 201 was applied
 * (acknowledged); one answered 504, 503 or another 5xx, or sent without an answer, is an
 * outcome unknown. An increment was applied exactly when some read saw its value: the
 * write applied after it named its version, which only a read of its value gives (a
 * client reads before each attempt), or it is the last value, which the final serial read
 * sees. Each applied write's count is one more than the count of the value it replaced,
 * so the counter ends at exactly the number of increments applied: the acknowledged ones
 * plus the unknown ones seen, which lies between the acknowledged ones and those plus
 * every unknown one. Two acknowledged increments never write the same count (a lost
 * update would).
 */
final class CounterClients {

	private static final String FIRST = "0:start:0";

	private final EntityCluster cluster;

	private final String key;

	private final Supplier<List<Integer>> members;

	private final long target;

	private final Set<String> acknowledged = ConcurrentHashMap.newKeySet();

	private final Set<String> unknown = ConcurrentHashMap.newKeySet();

	private final Set<String> seen = ConcurrentHashMap.newKeySet();

	private final Map<String, Integer> answers = new ConcurrentHashMap<>();

	private final AtomicLong conflicts = new AtomicLong();

	private final AtomicBoolean stopped = new AtomicBoolean();

	private final List<Thread> threads = new ArrayList<>();

	/** The first failure of a client's thread (an answer it cannot read). */
	private final AtomicReference<@Nullable Throwable> failure = new AtomicReference<>();

	/**
	 * @param members the nodes to send to now
	 * @param target the increments (acknowledged or unknown) after which the clients stop
	 */
	CounterClients(EntityCluster cluster, String key, Supplier<List<Integer>> members, long target) {
		this.cluster = cluster;
		this.key = key;
		this.members = members;
		this.target = target;
	}

	/**
	 * What the counter came to.
	 *
	 * @param count the final count (-1 when the final serial read failed)
	 * @param acknowledged increments answered 201
	 * @param unknown increments without a 201 or 412
	 * @param appliedUnknown those of them some read saw
	 * @param distinctAcknowledged distinct counts among the acknowledged increments
	 * @param conflicts 412s
	 * @param answers the writes' answers by status
	 */
	record Tally(long count, long acknowledged, long unknown, long appliedUnknown, long distinctAcknowledged,
			long conflicts, Map<String, Integer> answers) {

		/** The share of writes answered 504. */
		double timeoutShare() {
			long all = this.answers.values().stream().mapToLong(Integer::longValue).sum();
			return (all == 0) ? 0 : this.answers.getOrDefault("504", 0) / (double) all;
		}

	}

	/**
	 * Creates the counter ({@code If-None-Match: *}), a few tries, then starts
	 * {@code clients} threads, which stop at the target, at {@link #stop} or after
	 * {@code limitMillis}.
	 */
	void start(int clients, long limitMillis) {
		for (int attempt = 0; attempt < 20; attempt++) {
			Integer status = write(this.members.get().get(attempt % this.members.get().size()), FIRST, "If-None-Match",
					"*");
			if (status != null && (status == 201 || status == 412)) {
				break;
			}
			Pause.millis(250);
		}
		this.seen.add(FIRST);
		long deadline = System.nanoTime() + limitMillis * 1_000_000;
		for (int c = 0; c < clients; c++) {
			int client = c;
			this.threads
				.add(Thread.ofPlatform().name("counter-client-" + c).daemon().start(() -> increment(client, deadline)));
		}
	}

	/** Whether the increments reached the target. */
	boolean done() {
		return this.acknowledged.size() + this.unknown.size() >= this.target;
	}

	/** Stops the threads and waits for their last attempt (each is bounded). */
	void stop() {
		this.stopped.set(true);
		for (Thread thread : this.threads) {
			try {
				thread.join(60_000);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	private void increment(int client, long deadline) {
		try {
			incrementUntilDone(client, deadline);
		}
		catch (RuntimeException | Error ex) {
			this.failure.compareAndSet(null, ex);
		}
	}

	private void incrementUntilDone(int client, long deadline) {
		for (long attempt = 1; !this.stopped.get() && !done() && System.nanoTime() < deadline; attempt++) {
			List<Integer> nodes = this.members.get();
			int node = nodes.get((int) ((client + attempt) % nodes.size()));
			HttpResponse<String> current = read(node, "");
			if (current == null || current.statusCode() != 200) {
				Pause.millis(20);
				continue;
			}
			this.seen.add(current.body());
			String next = (count(current.body()) + 1) + ":" + client + ":" + attempt;
			Integer status = write(node, next, "If-Match", EntityCluster.etag(current));
			if (status == null) {
				Pause.millis(20);
			}
			else if (status == 201) {
				this.acknowledged.add(next);
			}
			else if (status == 412) {
				this.conflicts.incrementAndGet();
			}
			else {
				this.unknown.add(next);
			}
		}
	}

	/**
	 * Writes {@code value} with the condition; its status, -1 when sent without an
	 * answer, null when never sent (no connection).
	 */
	private @Nullable Integer write(int node, String value, String header, @Nullable String tag) {
		int status;
		try {
			status = this.cluster.send(node, "PUT", "id=" + this.key, value, header, String.valueOf(tag)).statusCode();
		}
		catch (ConnectException | HttpConnectTimeoutException ex) {
			return null;
		}
		catch (IOException ex) {
			status = -1;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			status = -1;
		}
		this.answers.merge((status == -1) ? RegisterClients.NO_ANSWER : String.valueOf(status), 1, Integer::sum);
		return status;
	}

	private @Nullable HttpResponse<String> read(int node, String more) {
		try {
			return this.cluster.send(node, "GET", "id=" + this.key + more, null);
		}
		catch (IOException ex) {
			return null;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return null;
		}
	}

	/**
	 * After {@link #stop} and once the cluster is healed: the final serial read (a few
	 * tries through the members) and what the counter came to.
	 */
	Tally tally() {
		Throwable failed = this.failure.get();
		if (failed != null) {
			throw new AssertionError("a counter client failed", failed);
		}
		long count = -1;
		List<Integer> nodes = this.members.get();
		for (int attempt = 0; attempt < 10 && count < 0; attempt++) {
			HttpResponse<String> last = read(nodes.get(attempt % nodes.size()), "&consistency=serial");
			if (last != null && last.statusCode() == 200) {
				this.seen.add(last.body());
				count = count(last.body());
			}
			else {
				Pause.millis(500);
			}
		}
		long applied = this.unknown.stream().filter(this.seen::contains).count();
		long distinct = this.acknowledged.stream().map(CounterClients::count).distinct().count();
		return new Tally(count, this.acknowledged.size(), this.unknown.size(), applied, distinct, this.conflicts.get(),
				new TreeMap<>(this.answers));
	}

	private static long count(String value) {
		return Long.parseLong(value.substring(0, value.indexOf(':')));
	}

}
