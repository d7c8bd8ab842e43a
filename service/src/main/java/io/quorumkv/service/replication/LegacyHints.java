package io.quorumkv.service.replication;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Hints of the earlier layout, moved to {@link HintStore}'s when it opens.
 *
 * <pre>
 * key   := peer id (UTF-8) | 0x00 | key
 * value := u8 kind (1 value, 0 tombstone) | value bytes
 * </pre>
 *
 * Every such key starts with the peer URL's first letter, never 0x00, which is where the
 * current layout's keys all start. Each live old hint is stored in the new layout, then a
 * tombstone at its timestamp replaces the old one (purged like a delivered hint); a hint
 * for a peer no longer in the cluster is dropped.
 */
final class LegacyHints {

	private LegacyHints() {
	}

	static Mono<Long> migrate(Storage storage, List<Node> peers, HintStore hints) {
		AtomicLong moved = new AtomicLong();
		return storage.scan(new byte[] { 1 }, null).filter((old) -> !old.isTombstone()).concatMap((old) -> {
			Node peer = peerOf(old.key(), peers);
			Mono<Void> keep = Mono.empty();
			if (peer != null) {
				byte[] id = peer.id().getBytes(StandardCharsets.UTF_8);
				byte[] key = Arrays.copyOfRange(old.key(), id.length + 1, old.key().length);
				byte[] stored = old.value();
				Entry entry = (stored == null || stored.length == 0 || stored[0] == 0)
						? Entry.tombstone(key, old.timestamp())
						: Entry.value(key, Arrays.copyOfRange(stored, 1, stored.length), old.timestamp());
				keep = hints.store(peer.id(), entry).doOnSuccess((ignored) -> moved.incrementAndGet());
			}
			else {
				hints.dropped();
			}
			return keep.then(storage.upsert(Entry.tombstone(old.key(), old.timestamp())));
		}).then(Mono.fromSupplier(() -> {
			if (moved.get() > 0) {
				HintStore.logger().info("Moved " + moved.get() + " hints to the hint store's current layout");
			}
			return moved.get();
		}));
	}

	private static @Nullable Node peerOf(byte[] key, List<Node> peers) {
		for (Node peer : peers) {
			byte[] id = peer.id().getBytes(StandardCharsets.UTF_8);
			if (key.length > id.length && key[id.length] == 0 && Arrays.equals(key, 0, id.length, id, 0, id.length)) {
				return peer;
			}
		}
		return null;
	}

}
