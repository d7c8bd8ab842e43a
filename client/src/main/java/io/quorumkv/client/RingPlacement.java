package io.quorumkv.client;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;

/**
 * Where the nodes place a key, computed as they compute it ({@code docs/client.md},
 * "Routing"): over the member ids in canonical order (sorted as Java sorts strings),
 * every hash XXH3-64 with seed 0 ({@link #XXH3}), a node's seed the hash of its id's
 * UTF-8 bytes, a key's position the hash of its bytes.
 *
 * <ul>
 * <li>{@link Rendezvous}: node {@code i} scores {@code XXH3(seed(i), XXH3(key))} (two
 * longs); the highest scores win, compared as signed longs, a tie going to the node first
 * in the canonical order.</li>
 * <li>{@link ConsistentHash}: node {@code i} has tokens {@code XXH3(seed(i), v)} for
 * {@code v = 0..virtualNodes-1}, sorted as signed longs (equal tokens by node order); a
 * key goes to the first token at or after its position, wrapping around, then clockwise
 * to the next distinct nodes.</li>
 * </ul>
 * Both answer indices into the canonical member list. Immutable and thread-safe.
 */
sealed interface RingPlacement {

	/**
	 * XXH3-64, from the library the nodes hash with (hash4j: no dependencies of its own),
	 * so that a key's replicas are the nodes' by construction.
	 */
	Hasher64 XXH3 = Hashing.xxh3_64();

	/** At most this many tokens in all, as the nodes allow: 12 MiB of ring. */
	int MAX_TOKENS = 1 << 20;

	/**
	 * The first {@code count} distinct members for {@code key}, most preferred first.
	 * @param count {@code 1..size}
	 */
	int[] replicas(byte[] key, int count);

	/** A node's seed: XXH3-64 of its id's UTF-8 bytes. */
	static long seed(String id) {
		return XXH3.hashBytesToLong(id.getBytes(StandardCharsets.UTF_8));
	}

	/** Rendezvous (highest random weight) hashing. */
	final class Rendezvous implements RingPlacement {

		private final long[] seeds;

		/**
		 * @param ids the member ids in canonical order
		 */
		Rendezvous(List<String> ids) {
			this.seeds = ids.stream().mapToLong(RingPlacement::seed).toArray();
		}

		@Override
		public int[] replicas(byte[] key, int count) {
			long keyHash = XXH3.hashBytesToLong(key);
			long[] scores = new long[this.seeds.length];
			for (int i = 0; i < scores.length; i++) {
				scores[i] = XXH3.hashLongLongToLong(this.seeds[i], keyHash);
			}
			boolean[] taken = new boolean[scores.length];
			int[] replicas = new int[count];
			for (int r = 0; r < count; r++) {
				int winner = -1;
				for (int i = 0; i < scores.length; i++) {
					// Strictly greater: a tie stays with the node first in canonical
					// order.
					if (!taken[i] && (winner < 0 || scores[i] > scores[winner])) {
						winner = i;
					}
				}
				taken[winner] = true;
				replicas[r] = winner;
			}
			return replicas;
		}

	}

	/** Consistent hashing on a ring of virtual nodes. */
	final class ConsistentHash implements RingPlacement {

		private final int size;

		/** Token positions, ascending as signed longs. */
		private final long[] tokens;

		/** {@code owners[t]}: the member index owning token {@code t}. */
		private final int[] owners;

		/**
		 * @param ids the member ids in canonical order
		 * @param virtualNodes tokens per member
		 */
		ConsistentHash(List<String> ids, int virtualNodes) {
			this.size = ids.size();
			long total = (long) this.size * virtualNodes;
			if (virtualNodes < 1 || total > MAX_TOKENS) {
				throw new IllegalArgumentException(
						"a ring of " + this.size + " nodes * " + virtualNodes + " virtual nodes is out of bounds");
			}
			int ringSize = (int) total;
			long[] unsorted = new long[ringSize];
			Integer[] order = new Integer[ringSize];
			for (int node = 0; node < this.size; node++) {
				long seed = seed(ids.get(node));
				for (int v = 0; v < virtualNodes; v++) {
					int slot = node * virtualNodes + v;
					unsorted[slot] = XXH3.hashLongLongToLong(seed, v);
					order[slot] = slot;
				}
			}
			// Slots are numbered node-major: equal tokens go by node order, as on the
			// nodes.
			Arrays.sort(order,
					Comparator.<Integer>comparingLong((slot) -> unsorted[slot]).thenComparingInt((slot) -> slot));
			this.tokens = new long[ringSize];
			this.owners = new int[ringSize];
			for (int t = 0; t < ringSize; t++) {
				this.tokens[t] = unsorted[order[t]];
				this.owners[t] = order[t] / virtualNodes;
			}
		}

		@Override
		public int[] replicas(byte[] key, int count) {
			int t = firstAtOrAfter(XXH3.hashBytesToLong(key));
			boolean[] taken = new boolean[this.size];
			int[] replicas = new int[count];
			int found = 0;
			// Ends: every member owns a token and count <= size.
			while (found < count) {
				int owner = this.owners[t];
				if (!taken[owner]) {
					taken[owner] = true;
					replicas[found++] = owner;
				}
				t = (t + 1 == this.tokens.length) ? 0 : t + 1;
			}
			return replicas;
		}

		private int firstAtOrAfter(long position) {
			int low = 0;
			int high = this.tokens.length;
			while (low < high) {
				int mid = (low + high) >>> 1;
				if (this.tokens[mid] < position) {
					low = mid + 1;
				}
				else {
					high = mid;
				}
			}
			return (low == this.tokens.length) ? 0 : low;
		}

	}

}
