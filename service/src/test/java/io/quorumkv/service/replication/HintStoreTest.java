package io.quorumkv.service.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.contract.ModelStorage;
import org.junit.jupiter.api.Test;

/** Hints keep what a replica missed, the expiry of an expiring write included. */
class HintStoreTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private static final Node PEER = Node.of("http://127.0.0.1:9");

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	@Test
	void hintsOfValuesTombstonesAndExpiringValuesComeBackAsTheyWereWritten() {
		ModelStorage storage = ModelStorage.inMemory();
		try (HintStore hints = new HintStore(storage, List.of(PEER), 100, new SimpleMeterRegistry())) {
			// An expiry long past: a hint is delivered expired or not (an expired write
			// is the tombstone that shadows the replica's older versions).
			List<Entry> missed = List.of(Entry.value(bytes("a"), bytes("plain"), 5), Entry.tombstone(bytes("b"), 6),
					Entry.expiring(bytes("c"), bytes("lease"), 7, 8), Entry.expiring(bytes("d"), new byte[0], 9, 10));
			for (Entry entry : missed) {
				hints.add(PEER, entry).block(TIMEOUT);
			}
			assertThat(hints.hints(PEER).collectList().block(TIMEOUT)).containsExactlyElementsOf(missed);
			hints.remove(PEER, missed.get(2)).block(TIMEOUT);
			assertThat(hints.hints(PEER).collectList().block(TIMEOUT)).containsExactly(missed.get(0), missed.get(1),
					missed.get(3));
		}
	}

}
