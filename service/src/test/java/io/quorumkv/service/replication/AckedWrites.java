package io.quorumkv.service.replication;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;

import io.quorumkv.service.support.KvClient;

/**
 * Writers of a cluster power-loss test and what they were told. Each writer owns its keys
 * and writes them in turn, always through the same node, so that a key's writes are
 * stamped in the order they were sent; a value is {@code <key>#<seq>} with the key's
 * sequence number. Every write answered {@code 201} is recorded with the time its answer
 * arrived ({@link System#nanoTime}), after the coordinator acknowledged it; every write
 * sent raises the key's highest sequence, acknowledged or not.
 */
final class AckedWrites {

	/** A write the client was told succeeded, and when. */
	record Ack(String key, long seq, long ackNanos) {
	}

	private final String prefix;

	private final int writers;

	private final int keysPerWriter;

	private final IntFunction<String> coordinator;

	private final String replicas;

	private final KvClient client = new KvClient(Duration.ofSeconds(5));

	private final ConcurrentLinkedQueue<Ack> acks = new ConcurrentLinkedQueue<>();

	private final ConcurrentHashMap<String, Long> sent = new ConcurrentHashMap<>();

	private final AtomicLong failures = new AtomicLong();

	private final AtomicBoolean running = new AtomicBoolean(true);

	private final List<Thread> threads = new ArrayList<>();

	/**
	 * @param coordinator the URL of the node writer {@code w} writes through
	 * @param replicas the writes' {@code replicas=ACK/FROM}
	 */
	AckedWrites(String prefix, int writers, int keysPerWriter, IntFunction<String> coordinator, String replicas) {
		this.prefix = prefix;
		this.writers = writers;
		this.keysPerWriter = keysPerWriter;
		this.coordinator = coordinator;
		this.replicas = replicas;
	}

	AckedWrites start() {
		for (int w = 0; w < this.writers; w++) {
			int writer = w;
			Thread thread = Thread.ofPlatform().name("power-loss-writer-" + w).daemon().start(() -> write(writer));
			this.threads.add(thread);
		}
		return this;
	}

	private void write(int writer) {
		String url = this.coordinator.apply(writer);
		long seq = 0;
		while (this.running.get()) {
			seq++;
			for (int k = 0; k < this.keysPerWriter && this.running.get(); k++) {
				String key = key(writer, k);
				this.sent.put(key, seq);
				int status = this.client.put(url, key, key + "#" + seq, this.replicas);
				if (status == 201) {
					this.acks.add(new Ack(key, seq, System.nanoTime()));
				}
				else {
					this.failures.incrementAndGet();
				}
			}
		}
	}

	/** Stops the writers and waits for them (each write is bounded by its timeout). */
	void stop() throws InterruptedException {
		this.running.set(false);
		for (Thread thread : this.threads) {
			if (!thread.join(Duration.ofSeconds(30))) {
				throw new IllegalStateException(thread.getName() + " did not stop within 30 s");
			}
		}
	}

	String key(int writer, int k) {
		return this.prefix + "-w" + writer + "-k" + k;
	}

	List<String> keys() {
		List<String> keys = new ArrayList<>();
		for (int w = 0; w < this.writers; w++) {
			for (int k = 0; k < this.keysPerWriter; k++) {
				keys.add(key(w, k));
			}
		}
		return keys;
	}

	/** The highest sequence sent for the key (0 when none). */
	long sent(String key) {
		return this.sent.getOrDefault(key, 0L);
	}

	List<Ack> acks() {
		return List.copyOf(this.acks);
	}

	long failures() {
		return this.failures.get();
	}

	/** The sequence a value read back carries, or -1 when it is not one of this key's. */
	static long seqOf(String key, String value) {
		String head = key + "#";
		if (!value.startsWith(head)) {
			return -1;
		}
		try {
			return Long.parseLong(value.substring(head.length()));
		}
		catch (NumberFormatException ex) {
			return -1;
		}
	}

}
