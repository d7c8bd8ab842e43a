package io.quorumkv.service.nemesis;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * Concurrent clients: each thread owns its keys (so one writer per key at a time) and
 * PUTs values never sent before, DELETEs, and GETs any thread's keys, through a random
 * node with a random {@code ack} of {@code from}; every operation goes through the
 * {@link History}. A thread's choices come from {@code seed + thread}; each run is
 * bounded in time and in operations.
 */
final class Clients {

	/**
	 * What the clients do.
	 *
	 * @param putPercent share of PUTs
	 * @param deletePercent share of DELETEs (the rest are GETs)
	 * @param acks the {@code ack}s drawn from, for reads and writes alike
	 * @param from replicas asked
	 * @param homeCoordinator whether each key is written through one node only (its index
	 * modulo the cluster size), else through any
	 * @param thinkMillis pause between two operations of a thread
	 */
	record Mix(int putPercent, int deletePercent, int[] acks, int from, boolean homeCoordinator, int thinkMillis) {

		static Mix standard() {
			return new Mix(45, 10, new int[] { 1, 2, 2, 3 }, 3, false, 2);
		}

	}

	static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(3);

	private static final long MAX_OPERATIONS_PER_THREAD = 2_000_000;

	private final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(1))
		.build();

	private final History history;

	private final List<String> urls;

	private final Supplier<List<Integer>> targets;

	private final String prefix;

	private final int threads;

	private final int keysPerThread;

	private final long seed;

	private final Mix mix;

	private final AtomicBoolean stopped = new AtomicBoolean();

	private final List<Thread> running = new ArrayList<>();

	Clients(History history, List<String> urls, String prefix, int threads, int keysPerThread, long seed, Mix mix) {
		this(history, urls, allOf(urls.size()), prefix, threads, keysPerThread, seed, mix);
	}

	/**
	 * @param urls every node's URL, by node number
	 * @param targets the nodes to send to now (the ring's members, as changes go): each
	 * operation asks it
	 */
	Clients(History history, List<String> urls, Supplier<List<Integer>> targets, String prefix, int threads,
			int keysPerThread, long seed, Mix mix) {
		this.history = history;
		this.urls = List.copyOf(urls);
		this.targets = targets;
		this.prefix = prefix;
		this.threads = threads;
		this.keysPerThread = keysPerThread;
		this.seed = seed;
		this.mix = mix;
	}

	private static Supplier<List<Integer>> allOf(int size) {
		List<Integer> all = new ArrayList<>();
		for (int node = 0; node < size; node++) {
			all.add(node);
		}
		List<Integer> fixed = List.copyOf(all);
		return () -> fixed;
	}

	String key(int thread, int index) {
		return this.prefix + "-t" + thread + "-k" + index;
	}

	List<String> keys() {
		List<String> keys = new ArrayList<>();
		for (int t = 0; t < this.threads; t++) {
			for (int k = 0; k < this.keysPerThread; k++) {
				keys.add(key(t, k));
			}
		}
		return keys;
	}

	/** Starts the threads; they run until {@link #stop} or {@code limit}. */
	void start(Duration limit) {
		long deadline = System.nanoTime() + limit.toNanos();
		for (int t = 0; t < this.threads; t++) {
			int thread = t;
			this.running.add(Thread.ofPlatform()
				.name("nemesis-client-" + t)
				.daemon()
				.start(() -> loop(thread, new Random(this.seed + thread), deadline)));
		}
	}

	/** Stops the threads and waits for their last operation (each is bounded). */
	void stop() {
		this.stopped.set(true);
		for (Thread thread : this.running) {
			try {
				thread.join(OPERATION_TIMEOUT.toMillis() * 3);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	private void loop(int thread, Random random, long deadline) {
		long counter = 0;
		for (long n = 0; n < MAX_OPERATIONS_PER_THREAD && !this.stopped.get() && System.nanoTime() < deadline; n++) {
			int draw = random.nextInt(100);
			int status;
			int ack = this.mix.acks()[random.nextInt(this.mix.acks().length)];
			if (draw < this.mix.putPercent() + this.mix.deletePercent()) {
				int index = random.nextInt(this.keysPerThread);
				String key = key(thread, index);
				List<Integer> nodes = this.targets.get();
				int node = nodes.get(this.mix.homeCoordinator() ? (thread * this.keysPerThread + index) % nodes.size()
						: random.nextInt(nodes.size()));
				if (draw < this.mix.putPercent()) {
					String value = this.prefix + "-t" + thread + "-v" + counter++;
					History.Invocation call = this.history.invoke(thread, Op.Kind.PUT, key, value, ack, this.mix.from(),
							node);
					Answer answer = send(put(node, key, ack, value));
					status = this.history.complete(call, answer.status(), answer.body()).status();
				}
				else {
					History.Invocation call = this.history.invoke(thread, Op.Kind.DELETE, key, null, ack,
							this.mix.from(), node);
					Answer answer = send(request(node, key, ack).DELETE());
					status = this.history.complete(call, answer.status(), answer.body()).status();
				}
			}
			else {
				String key = key(random.nextInt(this.threads), random.nextInt(this.keysPerThread));
				List<Integer> nodes = this.targets.get();
				int node = nodes.get(random.nextInt(nodes.size()));
				History.Invocation call = this.history.invoke(thread, Op.Kind.GET, key, null, ack, this.mix.from(),
						node);
				Answer answer = send(request(node, key, ack).GET());
				status = this.history.complete(call, answer.status(), answer.body()).status();
			}
			// A node that is down refuses at once: back off rather than spin.
			Pause.millis((status == -1) ? 100 : this.mix.thinkMillis());
		}
	}

	/**
	 * Reads every key at {@code from/from} after healing (every replica answers, the
	 * newest wins), a few tries each: the final state the checker compares with.
	 */
	List<Op> finalReads(History finals) {
		List<Op> reads = new ArrayList<>();
		List<Integer> nodes = this.targets.get();
		int index = 0;
		for (String key : keys()) {
			int node = nodes.get(index++ % nodes.size());
			Op read = null;
			for (int attempt = 0; attempt < 5; attempt++) {
				History.Invocation call = finals.invoke(-1, Op.Kind.GET, key, null, this.mix.from(), this.mix.from(),
						node);
				Answer answer = send(request(node, key, this.mix.from()).GET());
				read = finals.complete(call, answer.status(), answer.body());
				if (read.ok()) {
					break;
				}
				Pause.millis(500);
			}
			reads.add(read);
		}
		return reads;
	}

	private HttpRequest.Builder put(int node, String key, int ack, String value) {
		return request(node, key, ack).PUT(HttpRequest.BodyPublishers.ofString(value));
	}

	private HttpRequest.Builder request(int node, String key, int ack) {
		return HttpRequest
			.newBuilder(URI.create(this.urls.get(node) + "/v0/entity?id="
					+ URLEncoder.encode(key, StandardCharsets.UTF_8) + "&replicas=" + ack + "/" + this.mix.from()))
			.timeout(OPERATION_TIMEOUT);
	}

	private record Answer(int status, String body) {

	}

	private Answer send(HttpRequest.Builder request) {
		try {
			HttpResponse<String> response = this.http.send(request.build(),
					HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
			return new Answer(response.statusCode(), response.body());
		}
		catch (IOException ex) {
			return new Answer(-1, "");
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return new Answer(-1, "");
		}
	}

}
