package io.quorumkv.service.membership;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import io.quorumkv.service.cluster.ClusterState;
import io.quorumkv.service.cluster.ClusterStates;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.PlacementStrategy;
import io.quorumkv.service.cluster.Ring;
import io.quorumkv.service.membership.TransferCodec.Frame;
import io.quorumkv.service.peer.FrameDecoder;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Keys;
import io.quorumkv.storage.lsm.LsmOptions;
import io.quorumkv.storage.lsm.LsmStorage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;

/**
 * A source streams exactly the entries its target gains from it, in their newest version
 * and in key order, from a storage whose scan it filters by key; progress frames come
 * between them with an estimate of what the scan read.
 */
class TransferSourceTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	private static final int KEYS = 20_000;

	@TempDir
	Path dir;

	private static byte[] key(int i) {
		return String.format("user:%08d", i).getBytes(StandardCharsets.UTF_8);
	}

	private static byte[] value(int i, int size) {
		byte[] value = new byte[size];
		java.util.Arrays.fill(value, (byte) i);
		return value;
	}

	@Test
	void sendsTheEntriesTheTargetGainsInTheirNewestVersionWithProgressBetween() {
		List<Node> four = IntStream.rangeClosed(1, 4)
			.mapToObj((i) -> Node.of("node-" + i, "http://127.0.0.1:1808" + i))
			.toList();
		Ring ring = Ring.seed("qkv-test", four, 3, PlacementStrategy.RENDEZVOUS, 128)
			.join(Node.of("node-5", "http://127.0.0.1:18085"), "c1", "http://127.0.0.1:18081");
		// Versions spread over the memtable and several tables: a 64 KiB memtable.
		try (ClusterState state = ClusterStates.of(four.getFirst(), ring, this.dir.resolve("ring"));
				LsmStorage storage = LsmStorage.open(LsmOptions.defaults(this.dir.resolve("data"))
					.withMemtableSize(64 << 10)
					.withTombstoneGracePeriod(Duration.ofDays(1)))) {
			List<Entry> writes = new ArrayList<>();
			for (int i = 0; i < KEYS; i++) {
				writes.add(Entry.value(key(i), value(i, 50 + i % 101), 10));
			}
			for (int i = 0; i < KEYS; i += 7) {
				writes.add(Entry.value(key(i), value(i + 1, 80), 20));
			}
			for (int i = 0; i < KEYS; i += 10) {
				writes.add(Entry.tombstone(key(i), 30));
			}
			for (int i = 0; i < KEYS; i += 3) {
				writes.add(Entry.value(key(i), value(i + 2, 10), 5));
			}
			Flux.fromIterable(writes).concatMap(storage::upsert).then().block(TIMEOUT);

			TransferPlan plan = new TransferPlan(state.layout());
			List<Entry> all = storage.scan(new byte[0], null).collectList().block(TIMEOUT);
			List<Entry> gained = all.stream().filter((e) -> plan.sends(e.key(), "node-1", "node-5")).toList();
			assertThat(gained).hasSizeBetween(KEYS / 20, KEYS / 2);

			FrameDecoder<Frame> decoder = TransferCodec.decoder(1 << 20);
			List<Frame> frames = new TransferSource(state, storage).frames("c1", "node-5", new byte[0], null)
				.concatMapIterable(decoder::decode)
				.collectList()
				.block(TIMEOUT);
			assertThat(decoder.isComplete()).isTrue();

			assertThat(frames.getFirst()).isInstanceOf(Frame.Estimate.class);
			List<Frame> stream = frames.subList(1, frames.size());
			assertThat(stream.stream().filter(Frame.Data.class::isInstance).map((f) -> ((Frame.Data) f).entry()))
				.containsExactlyElementsOf(gained);
			for (int i = 1; i < stream.size(); i++) {
				assertThat(Keys.compare(stream.get(i - 1).key(), stream.get(i).key())).as("frame %d", i).isLessThan(0);
			}

			List<Frame.Progress> progress = stream.stream()
				.filter(Frame.Progress.class::isInstance)
				.map(Frame.Progress.class::cast)
				.toList();
			// About one in 512 of the keys not sent, by a hash of the key.
			assertThat(progress).hasSizeBetween(10, 100);
			Frame.Progress last = progress.getLast();
			long read = all.stream()
				.filter((e) -> Keys.compare(e.key(), last.key()) <= 0)
				.mapToLong(TransferSource::size)
				.sum();
			// Estimated from the keys looked at (every stored version) and the sent
			// entries' mean value.
			assertThat(last.scannedBytes()).isBetween(read * 8 / 10, read * 16 / 10);
		}
	}

}
