package io.quorumkv.service.nemesis;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.quorumkv.service.support.Eventually;
import io.quorumkv.service.support.KvClient;

/**
 * The data of the membership scenarios: a preload for the changes to stream, and the
 * check that after healing every key is on exactly RF agreeing replicas of the final
 * ring.
 */
final class RingData {

	private RingData() {
	}

	/** 5xx answers that are neither a 503 (refused) nor a 504 (not enough replicas). */
	static long otherServerErrors(CheckReport report) {
		return report.answers()
			.values()
			.stream()
			.mapToLong((a) -> a.serverErrors() - a.timeouts() - a.unavailable())
			.sum();
	}

	/**
	 * Writes {@code count} keys of {@code size} bytes at {@code 3/3} through the members
	 * (the data the changes stream); the values by key.
	 */
	static Map<String, String> preload(NemesisNodes nodes, String prefix, int count, int size) {
		long started = System.nanoTime();
		KvClient client = new KvClient(Duration.ofSeconds(10));
		Map<String, String> values = new ConcurrentHashMap<>();
		List<Integer> members = nodes.members();
		String padding = "x".repeat(size);
		AtomicInteger next = new AtomicInteger();
		List<Thread> writers = new ArrayList<>();
		for (int w = 0; w < 4; w++) {
			writers.add(Thread.ofPlatform().daemon().start(() -> {
				for (int i = next.getAndIncrement(); i < count; i = next.getAndIncrement()) {
					String key = prefix + "-" + i;
					String value = key + padding;
					String url = nodes.url(members.get(i % members.size()));
					for (int attempt = 0; attempt < 5; attempt++) {
						if (client.put(url, key, value, "3/3") == 201) {
							values.put(key, value);
							break;
						}
						Pause.millis(200);
					}
				}
			}));
		}
		for (Thread writer : writers) {
			try {
				writer.join(180_000);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
		assertThat(values).as("preloaded keys acknowledged").hasSize(count);
		System.out.println("Nemesis: preloaded " + count + " keys of " + size + " bytes at 3/3 in "
				+ (System.nanoTime() - started) / 1_000_000 + " ms");
		return values;
	}

	/**
	 * Every key is on exactly RF replicas of the final ring, which agree (a value or a
	 * tombstone), or on none; a preloaded key holds its value on each. Asked again for up
	 * to 60 s (the final reads' repairs are in the background).
	 */
	static void everyKeyOnRfAgreeingReplicas(NemesisNodes nodes, List<String> keys, Map<String, String> bulk, int rf) {
		KvClient client = new KvClient(Duration.ofSeconds(5));
		List<Integer> members = nodes.members();
		Eventually.eventually(Duration.ofSeconds(60), () -> {
			List<String> wrong = new ArrayList<>();
			for (String key : keys) {
				String state = null;
				int copies = 0;
				for (int node : members) {
					KvClient.Local local = client.local(nodes.url(node), key);
					assertThat(local.status()).as("local read of %s on n%d", key, node).isIn(200, 404);
					if (local.absent()) {
						continue;
					}
					copies++;
					String here = local.tombstone() ? "<tombstone>" : local.value();
					if (state != null && !state.equals(here)) {
						wrong.add(key + ": " + state + " vs " + here);
					}
					state = here;
				}
				if (copies != rf && copies != 0) {
					wrong.add(key + " on " + copies + " of " + members);
				}
				String expected = bulk.get(key);
				if (expected != null && !(copies == rf && expected.equals(state))) {
					wrong.add(key + " (preloaded) reads " + state + " on " + copies + " replicas");
				}
			}
			assertThat(wrong).as("keys not on exactly %d agreeing replicas of %s", rf, members).isEmpty();
		});
		System.out.println("Nemesis: every key of " + keys.size() + " on exactly " + rf + " agreeing replicas of "
				+ members + " (or on none)");
	}

}
