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
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * Concurrent clients: threads write keys in groups of {@link Mix#writersPerKey} (each key
 * has that many writers, at the same time), PUT values never sent before (some with a
 * {@code ttl}), DELETE, GET any key (some with {@code If-None-Match} and the version the
 * thread last read of it) and read pages of key ranges, through a random node with a
 * random {@code ack} of {@code from}; every operation goes through the {@link History}. A
 * thread's choices come from {@code seed + thread}; each run is bounded in time and in
 * operations.
 */
final class Clients {

	/**
	 * What the clients do.
	 *
	 * @param putPercent share of PUTs
	 * @param deletePercent share of DELETEs (the rest are reads)
	 * @param acks the {@code ack}s drawn from, for reads and writes alike
	 * @param from replicas asked
	 * @param homeCoordinator whether each key is written through one node only (its index
	 * modulo the cluster size), else through any
	 * @param thinkMillis pause between two operations of a thread
	 * @param writersPerKey threads writing each key
	 * @param ttlPercent share of PUTs with a {@code ttl} of 1 or 2 s
	 * @param conditionalPercent share of GETs sent with {@code If-None-Match} (when the
	 * thread has read a version of the key)
	 * @param scanPercent share of all operations that are a range read of a few keys, in
	 * pages of 1 to 4 records (of the reads' share)
	 * @param clockSlackMillis how far from its write's time a version may be, -1 when
	 * clocks are faulted (see {@link Checker.Timing})
	 */
	record Mix(int putPercent, int deletePercent, int[] acks, int from, boolean homeCoordinator, int thinkMillis,
			int writersPerKey, int ttlPercent, int conditionalPercent, int scanPercent, long clockSlackMillis) {

		/** One writer per key, GETs only, no ttl, no check of versions against time. */
		Mix(int putPercent, int deletePercent, int[] acks, int from, boolean homeCoordinator, int thinkMillis) {
			this(putPercent, deletePercent, acks, from, homeCoordinator, thinkMillis, 1, 0, 0, 0, -1);
		}

		static Mix standard() {
			return new Mix(45, 10, new int[] { 1, 2, 2, 3 }, 3, false, 2, 2, 20, 30, 8,
					Checker.Timing.SLACK_MICROS / 1_000);
		}

	}

	static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(3);

	private static final int MAX_PAGES = 4;

	private static final Pattern RECORD = Pattern
		.compile("\"key\":\"([^\"]*)\",\"value\":\"([^\"]*)\",\"version\":\"([0-9a-f]+)\"");

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

	/** The key {@code index} of a group of writers. */
	String key(int group, int index) {
		return this.prefix + "-g" + group + "-k" + index;
	}

	private int groups() {
		return (this.threads + this.mix.writersPerKey() - 1) / this.mix.writersPerKey();
	}

	private int keysPerGroup() {
		return this.keysPerThread * this.mix.writersPerKey();
	}

	List<String> keys() {
		List<String> keys = new ArrayList<>();
		for (int g = 0; g < groups(); g++) {
			for (int k = 0; k < keysPerGroup(); k++) {
				keys.add(key(g, k));
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
		List<String> sorted = keys().stream().sorted().toList();
		Map<String, String> versions = new HashMap<>();
		for (long n = 0; n < MAX_OPERATIONS_PER_THREAD && !this.stopped.get() && System.nanoTime() < deadline; n++) {
			int draw = random.nextInt(100);
			int status;
			int ack = this.mix.acks()[random.nextInt(this.mix.acks().length)];
			List<Integer> nodes = this.targets.get();
			if (draw < this.mix.putPercent() + this.mix.deletePercent()) {
				int group = thread / this.mix.writersPerKey();
				int index = random.nextInt(keysPerGroup());
				String key = key(group, index);
				int node = nodes.get(this.mix.homeCoordinator() ? (group * keysPerGroup() + index) % nodes.size()
						: random.nextInt(nodes.size()));
				if (draw < this.mix.putPercent()) {
					String value = this.prefix + "-t" + thread + "-v" + counter++;
					long ttl = (random.nextInt(100) < this.mix.ttlPercent()) ? 1 + random.nextInt(2) : 0;
					History.Invocation call = this.history.invoke(thread, Op.Kind.PUT, key, value, ack, this.mix.from(),
							node, ttl, null, null);
					Answer answer = send(put(node, key, ack, value, ttl));
					status = this.history.complete(call, answer.status(), answer.body()).status();
				}
				else {
					History.Invocation call = this.history.invoke(thread, Op.Kind.DELETE, key, null, ack,
							this.mix.from(), node);
					Answer answer = send(request(node, key, ack, "").DELETE());
					status = this.history.complete(call, answer.status(), answer.body()).status();
				}
			}
			else if (draw < this.mix.putPercent() + this.mix.deletePercent() + this.mix.scanPercent()) {
				status = scan(thread, random, sorted, ack, nodes.get(random.nextInt(nodes.size())), versions);
			}
			else {
				String key = sorted.get(random.nextInt(sorted.size()));
				int node = nodes.get(random.nextInt(nodes.size()));
				String known = versions.get(key);
				String ifNoneMatch = (known != null && random.nextInt(100) < this.mix.conditionalPercent()) ? known
						: null;
				History.Invocation call = this.history.invoke(thread, Op.Kind.GET, key, null, ack, this.mix.from(),
						node, 0, ifNoneMatch, null);
				HttpRequest.Builder request = request(node, key, ack, "");
				if (ifNoneMatch != null) {
					request.header("If-None-Match", "\"" + ifNoneMatch + "\"");
				}
				Answer answer = send(request.GET());
				Op op = this.history.complete(call, answer.status(), answer.body(), answer.version(), List.of());
				status = op.status();
				remember(versions, key, op.version(), status);
			}
			// A node that is down refuses at once: back off rather than spin.
			Pause.millis((status == -1) ? 100 : this.mix.thinkMillis());
		}
	}

	private static void remember(Map<String, String> versions, String key, @Nullable String version, int status) {
		if (status == 200 && version != null) {
			versions.put(key, version);
		}
		else if (status == 404) {
			versions.remove(key);
		}
	}

	/**
	 * Reads a range of 4 to 12 of the keys, in order, in pages of 1 to 4 records, at most
	 * 4 pages (each page its own operation); the status of the last page read.
	 */
	private int scan(int thread, Random random, List<String> sorted, int ack, int node, Map<String, String> versions) {
		int span = 4 + random.nextInt(9);
		int first = random.nextInt(Math.max(1, sorted.size() - span));
		String lower = sorted.get(first);
		String end = sorted.get(Math.min(sorted.size() - 1, first + span));
		int limit = 1 + random.nextInt(4);
		boolean after = false;
		int status = -1;
		for (int page = 0; page < MAX_PAGES; page++) {
			History.Invocation call = this.history.invoke(thread, Op.Kind.SCAN, lower, null, ack, this.mix.from(), node,
					0, null, new Op.Page(after, end, limit, List.of()));
			Answer answer = send(range(node, lower, after, end, limit, ack));
			List<Op.Record> records = (answer.status() == 200) ? records(answer.body()) : List.of();
			status = this.history.complete(call, answer.status(), null, null, records).status();
			for (Op.Record record : records) {
				versions.put(record.key(), record.version());
			}
			if (status != 200 || records.size() < limit) {
				break;
			}
			lower = records.getLast().key();
			after = true;
		}
		return status;
	}

	/** The records of an NDJSON range answer: key and value in base64, the version. */
	static List<Op.Record> records(String body) {
		List<Op.Record> records = new ArrayList<>();
		Base64.Decoder base64 = Base64.getDecoder();
		for (String line : body.split("\n")) {
			if (line.isBlank()) {
				continue;
			}
			Matcher matcher = RECORD.matcher(line);
			if (!matcher.find()) {
				throw new IllegalStateException("not a range record: " + line);
			}
			records.add(new Op.Record(new String(base64.decode(matcher.group(1)), StandardCharsets.UTF_8),
					new String(base64.decode(matcher.group(2)), StandardCharsets.UTF_8), matcher.group(3)));
		}
		return records;
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
				Answer answer = send(request(node, key, this.mix.from(), "").GET());
				read = finals.complete(call, answer.status(), answer.body(), answer.version(), List.of());
				if (read.ok()) {
					break;
				}
				Pause.millis(500);
			}
			reads.add(read);
		}
		return reads;
	}

	private HttpRequest.Builder put(int node, String key, int ack, String value, long ttl) {
		return request(node, key, ack, (ttl > 0) ? "&ttl=" + ttl : "").PUT(HttpRequest.BodyPublishers.ofString(value));
	}

	private HttpRequest.Builder request(int node, String key, int ack, String more) {
		return HttpRequest
			.newBuilder(URI.create(this.urls.get(node) + "/v0/entity?id=" + encode(key) + "&replicas=" + ack + "/"
					+ this.mix.from() + more))
			.timeout(OPERATION_TIMEOUT);
	}

	private HttpRequest.Builder range(int node, String lower, boolean after, String end, int limit, int ack) {
		return HttpRequest
			.newBuilder(URI.create(this.urls.get(node) + "/v0/entities?" + (after ? "after=" : "start=") + encode(lower)
					+ "&end=" + encode(end) + "&limit=" + limit + "&replicas=" + ack + "/" + this.mix.from()))
			.header("Accept", "application/x-ndjson")
			.timeout(OPERATION_TIMEOUT)
			.GET();
	}

	private static String encode(String text) {
		return URLEncoder.encode(text, StandardCharsets.UTF_8);
	}

	/** An answer: status (-1 for none), body, and the {@code ETag} unquoted if any. */
	private record Answer(int status, String body, @Nullable String version) {

	}

	private Answer send(HttpRequest.Builder request) {
		try {
			HttpResponse<String> response = this.http.send(request.build(),
					HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
			String etag = response.headers().firstValue("ETag").orElse(null);
			String version = (etag != null && etag.length() > 2 && etag.startsWith("\"") && etag.endsWith("\""))
					? etag.substring(1, etag.length() - 1) : null;
			return new Answer(response.statusCode(), response.body(), version);
		}
		catch (IOException ex) {
			return new Answer(-1, "", null);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return new Answer(-1, "", null);
		}
	}

}
