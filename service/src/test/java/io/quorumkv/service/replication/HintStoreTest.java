package io.quorumkv.service.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.derby.DerbyStorage;
import io.quorumkv.storage.derby.DerbyStorageOptions;
import io.quorumkv.storage.h2.H2Storage;
import io.quorumkv.storage.h2.H2StorageOptions;
import io.quorumkv.storage.lsm.LsmOptions;
import io.quorumkv.storage.lsm.LsmStorage;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The hint store on each backend: every key the data store takes has a hint, the expiry
 * of an expiring write included.
 */
class HintStoreTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	enum Backend {

		LSM((dir) -> LsmStorage.open(LsmOptions.defaults(dir).withTombstoneGracePeriod(Duration.ZERO))),
		H2((dir) -> H2Storage.open(H2StorageOptions.defaults(dir))),
		DERBY((dir) -> DerbyStorage.open(DerbyStorageOptions.defaults(dir)));

		final Function<Path, Storage> opener;

		Backend(Function<Path, Storage> opener) {
			this.opener = opener;
		}

	}

	@TempDir
	Path dir;

	final Node peer = Node.of("http://127.0.0.1:9001");

	final Node other = Node.of("http://127.0.0.1:9002");

	private HintStore open(Storage storage) {
		return new HintStore(storage, List.of(this.peer, this.other), 1_000, new SimpleMeterRegistry());
	}

	/** The longest key the backend stores (64 KiB at most, the service's own limit). */
	private static byte[] longestKey(Storage storage) {
		byte[] key = new byte[Math.min(storage.maxKeySize(), 64 * 1024)];
		Arrays.fill(key, (byte) 'k');
		key[key.length - 1] = (byte) 0xFF;
		return key;
	}

	/** What is left of delivered hints once the backend has dropped them. */
	private static long footprintAfterPurge(HintStore hints, Storage storage) {
		hints.purge().block(TIMEOUT);
		storage.compact().block(TIMEOUT);
		return hints.footprint().block(TIMEOUT);
	}

	@ParameterizedTest
	@EnumSource(Backend.class)
	void aKeyOfTheBackendsLongestSizeHasAHintThatIsDeliveredAndDropped(Backend backend) {
		try (Storage storage = backend.opener.apply(this.dir); HintStore hints = open(storage)) {
			byte[] key = longestKey(storage);
			Entry missed = Entry.value(key, "value".getBytes(StandardCharsets.UTF_8), 42);
			hints.add(this.peer, missed).block(TIMEOUT);
			hints.add(this.other, Entry.tombstone(key, 43)).block(TIMEOUT);
			assertThat(hints.hints(this.peer).collectList().block(TIMEOUT)).containsExactly(missed);
			assertThat(hints.hints(this.other).collectList().block(TIMEOUT)).containsExactly(Entry.tombstone(key, 43));
			hints.remove(this.peer, missed).block(TIMEOUT);
			assertThat(hints.hints(this.peer).collectList().block(TIMEOUT)).isEmpty();
			assertThat(footprintAfterPurge(hints, storage)).as("only the other peer's hint is left").isEqualTo(1);
		}
	}

	@ParameterizedTest
	@EnumSource(Backend.class)
	void eachPeerAndKeyKeepsItsGreatestMissedVersionByTheDatasOrder(Backend backend) {
		try (Storage storage = backend.opener.apply(this.dir); HintStore hints = open(storage)) {
			byte[] key = "k".getBytes(StandardCharsets.UTF_8);
			hints.add(this.peer, Entry.value(key, "older".getBytes(StandardCharsets.UTF_8), 5)).block(TIMEOUT);
			hints.add(this.peer, Entry.value(key, "b".getBytes(StandardCharsets.UTF_8), 9)).block(TIMEOUT);
			hints.add(this.peer, Entry.tombstone(key, 9)).block(TIMEOUT);
			hints.add(this.peer, Entry.value(key, "c".getBytes(StandardCharsets.UTF_8), 9)).block(TIMEOUT);
			assertThat(hints.hints(this.peer).collectList().block(TIMEOUT)).containsExactly(Entry.tombstone(key, 9));
			// Delivered: a hint written meanwhile with a newer version stays.
			hints.add(this.peer, Entry.value(key, "newer".getBytes(StandardCharsets.UTF_8), 10)).block(TIMEOUT);
			hints.remove(this.peer, Entry.tombstone(key, 9)).block(TIMEOUT);
			assertThat(hints.hints(this.peer).collectList().block(TIMEOUT))
				.containsExactly(Entry.value(key, "newer".getBytes(StandardCharsets.UTF_8), 10));
		}
	}

	@ParameterizedTest
	@EnumSource(Backend.class)
	void hintsOfValuesTombstonesAndExpiringValuesComeBackAsTheyWereWritten(Backend backend) {
		try (Storage storage = backend.opener.apply(this.dir); HintStore hints = open(storage)) {
			// Expiries long past by the store's clock: a hint is delivered expired or not
			// (an expired write is the tombstone that shadows the replica's older
			// versions), and the hint itself never expires in the hint store.
			List<Entry> missed = List.of(Entry.value(bytes("a"), bytes("plain"), 5), Entry.tombstone(bytes("b"), 6),
					Entry.expiring(bytes("c"), bytes("lease"), 7, 8), Entry.expiring(bytes("d"), new byte[0], 9, 10),
					Entry.expiring(bytes("e"), bytes("far"), 11, Long.MAX_VALUE - 1));
			for (Entry entry : missed) {
				hints.add(this.peer, entry).block(TIMEOUT);
			}
			assertThat(hints.hints(this.peer).collectList().block(TIMEOUT)).containsExactlyInAnyOrderElementsOf(missed);
			hints.remove(this.peer, missed.get(2)).block(TIMEOUT);
			assertThat(footprintAfterPurge(hints, storage)).as("the delivered hint is dropped, no other")
				.isEqualTo(missed.size() - 1);
			assertThat(hints.hints(this.peer).collectList().block(TIMEOUT)).containsExactlyInAnyOrder(missed.get(0),
					missed.get(1), missed.get(3), missed.get(4));
		}
	}

	@ParameterizedTest
	@EnumSource(Backend.class)
	void aTombstoneBeatsAnExpiringValueOfItsTimestampAsInTheData(Backend backend) {
		try (Storage storage = backend.opener.apply(this.dir); HintStore hints = open(storage)) {
			byte[] key = bytes("k");
			hints.add(this.peer, Entry.expiring(key, bytes("lease"), 9, Long.MAX_VALUE - 1)).block(TIMEOUT);
			hints.add(this.peer, Entry.tombstone(key, 9)).block(TIMEOUT);
			hints.add(this.peer, Entry.expiring(key, bytes("other"), 9, Long.MAX_VALUE - 1)).block(TIMEOUT);
			assertThat(hints.hints(this.peer).collectList().block(TIMEOUT)).containsExactly(Entry.tombstone(key, 9));
			hints.add(this.peer, Entry.expiring(key, bytes("newer"), 10, 20)).block(TIMEOUT);
			assertThat(hints.hints(this.peer).collectList().block(TIMEOUT))
				.containsExactly(Entry.expiring(key, bytes("newer"), 10, 20));
		}
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	@ParameterizedTest
	@EnumSource(Backend.class)
	void hintsOfTheEarlierLayoutAreMovedWhenTheStoreOpens(Backend backend) {
		try (Storage storage = backend.opener.apply(this.dir)) {
			storage.upsert(legacy(this.peer, "a", "v".getBytes(StandardCharsets.UTF_8), 3)).block(TIMEOUT);
			storage.upsert(legacy(this.other, "b", null, 4)).block(TIMEOUT);
			storage.upsert(legacy(Node.of("http://127.0.0.1:9999"), "c", new byte[0], 5)).block(TIMEOUT);
			try (HintStore hints = open(storage)) {
				assertThat(hints.hints(this.peer).collectList().block(TIMEOUT)).containsExactly(
						Entry.value("a".getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8), 3));
				assertThat(hints.hints(this.other).collectList().block(TIMEOUT))
					.containsExactly(Entry.tombstone("b".getBytes(StandardCharsets.UTF_8), 4));
				assertThat(hints.pending(this.peer)).isEqualTo(1);
				assertThat(footprintAfterPurge(hints, storage)).as("old keys dropped; the gone peer's hint too")
					.isEqualTo(2);
			}
		}
	}

	/** A hint as the earlier layout kept it: {@code peer id, 0x00, key}; kind 1 or 0. */
	private static Entry legacy(Node peer, String key, byte[] value, long timestamp) {
		byte[] id = peer.id().getBytes(StandardCharsets.UTF_8);
		byte[] k = key.getBytes(StandardCharsets.UTF_8);
		byte[] hintKey = Arrays.copyOf(id, id.length + 1 + k.length);
		System.arraycopy(k, 0, hintKey, id.length + 1, k.length);
		byte[] stored = new byte[1 + ((value != null) ? value.length : 0)];
		stored[0] = (byte) ((value != null) ? 1 : 0);
		if (value != null) {
			System.arraycopy(value, 0, stored, 1, value.length);
		}
		return Entry.value(hintKey, stored, timestamp);
	}

}
