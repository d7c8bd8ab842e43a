package io.quorumkv.service.repair;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

import com.dynatrace.hash4j.hashing.HashValue128;
import io.quorumkv.service.peer.Pacer;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The trees of several ranges, built together from one scan of the whole store (a storage
 * scans in key order, and every range is spread over the key space).
 */
final class RangeTrees {

	private final List<MerkleTree> trees;

	private RangeTrees(List<TokenRange> ranges, int depth) {
		List<MerkleTree> trees = new ArrayList<>(ranges.size());
		for (int i = 0; i < ranges.size(); i++) {
			if (i > 0 && ranges.get(i).start() <= ranges.get(i - 1).end()) {
				throw new IllegalArgumentException("ranges overlap or are out of order: " + ranges);
			}
			trees.add(new MerkleTree(ranges.get(i), depth));
		}
		this.trees = List.copyOf(trees);
	}

	/**
	 * Scans {@code storage} at the pacer's rate on {@code scheduler} and builds the trees
	 * of {@code ranges} (sorted, disjoint) over the entries whose key {@code keep}
	 * accepts.
	 */
	static Mono<RangeTrees> build(Storage storage, List<TokenRange> ranges, int depth, Predicate<byte[]> keep,
			Pacer pacer, Scheduler scheduler) {
		return build(storage, ranges, depth, Map.of(Boolean.TRUE, keep), pacer, scheduler)
			.map((trees) -> trees.get(Boolean.TRUE));
	}

	/**
	 * As {@link #build(Storage, List, int, Predicate, Pacer, Scheduler)} for several
	 * filters from one scan: for each key of {@code keeps}, the trees of {@code ranges}
	 * over the entries its filter accepts (a repair's one set of trees per peer, each of
	 * the keys this node shares with that peer). Each entry's token and hash are computed
	 * once.
	 */
	static <K> Mono<Map<K, RangeTrees>> build(Storage storage, List<TokenRange> ranges, int depth,
			Map<K, Predicate<byte[]>> keeps, Pacer pacer, Scheduler scheduler) {
		return Mono.defer(() -> {
			Map<K, RangeTrees> all = new LinkedHashMap<>();
			List<Map.Entry<Predicate<byte[]>, RangeTrees>> targets = new ArrayList<>(keeps.size());
			keeps.forEach((key, keep) -> {
				RangeTrees trees = new RangeTrees(ranges, depth);
				all.put(key, trees);
				targets.add(Map.entry(keep, trees));
			});
			return pacer.paced(storage.scan(new byte[0], null))
				.doOnNext((entry) -> add(entry, targets))
				.then(Mono.fromSupplier(() -> {
					all.values().forEach(RangeTrees::seal);
					return all;
				}));
		}).subscribeOn(scheduler);
	}

	List<MerkleTree> trees() {
		return this.trees;
	}

	MerkleTree tree(int index) {
		return this.trees.get(index);
	}

	/** The index of the tree whose range holds {@code token}, or -1. */
	int find(long token) {
		int low = 0;
		int high = this.trees.size() - 1;
		while (low <= high) {
			int middle = (low + high) >>> 1;
			TokenRange range = this.trees.get(middle).range();
			if (token < range.start()) {
				high = middle - 1;
			}
			else if (token > range.end()) {
				low = middle + 1;
			}
			else {
				return middle;
			}
		}
		return -1;
	}

	/** Adds {@code entry} to each of {@code targets} whose filter accepts its key. */
	private static void add(Entry entry, List<Map.Entry<Predicate<byte[]>, RangeTrees>> targets) {
		long token = TokenRange.token(entry.key());
		// Every target has the same ranges: one lookup and one hash for all.
		int tree = targets.isEmpty() ? -1 : targets.get(0).getValue().find(token);
		if (tree < 0) {
			return;
		}
		HashValue128 hash = EntryDigest.of(entry).versionHash();
		for (Map.Entry<Predicate<byte[]>, RangeTrees> target : targets) {
			if (target.getKey().test(entry.key())) {
				target.getValue().trees.get(tree)
					.add(token, hash.getMostSignificantBits(), hash.getLeastSignificantBits());
			}
		}
	}

	private RangeTrees seal() {
		this.trees.forEach(MerkleTree::seal);
		return this;
	}

}
