package io.quorumkv.storage.lsm;

import java.nio.charset.StandardCharsets;
import java.util.List;

import io.quorumkv.storage.lsm.io.FaultFileIo.Tear;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;
import org.jspecify.annotations.Nullable;

/**
 * The operations of the model-based property tests and their generators: upserts and
 * deletes with timestamps from a small range (so that late writes, equal timestamps and
 * value tie-breaks are frequent), reads, scans, {@code flush()}, forced memtable flushes
 * and full compactions, clean reopens, process kills and power losses.
 */
final class ModelOps {

	static final int KEYS = 120;

	private ModelOps() {
	}

	sealed interface Op permits Put, Delete, Get, Scan, Flush, ForceFlush, Compact, Reopen, Kill, PowerLoss {

	}

	record Put(int key, byte[] value, long timestamp) implements Op {
		@Override
		public String toString() {
			return "Put[" + this.key + ", " + this.value.length + " bytes, " + this.timestamp + "]";
		}
	}

	record Delete(int key, long timestamp) implements Op {
	}

	record Get(int key) implements Op {
	}

	record Scan(int from, @Nullable Integer to) implements Op {
	}

	/** {@code flush()}: everything acknowledged before is durable. */
	record Flush() implements Op {
	}

	record ForceFlush() implements Op {
	}

	record Compact() implements Op {
	}

	/** A clean close and open. */
	record Reopen() implements Op {
	}

	/** A process crash: the page cache survives. */
	record Kill() implements Op {
	}

	/** A power loss: unsynced data is dropped or torn. */
	record PowerLoss(Tear tear) implements Op {
	}

	/**
	 * Key {@code i}, spread over the key space so that neighbours are not written
	 * together.
	 */
	static byte[] key(int i) {
		return ("k" + (i * 7919 % KEYS)).getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * Operations on keys {@code [0, keys)}, with crash operations ({@link Kill},
	 * {@link PowerLoss}) when {@code crashes}.
	 */
	static Arbitrary<List<Op>> operations(int keys, boolean crashes, int minSize, int maxSize) {
		Arbitrary<Integer> key = Arbitraries.integers().between(0, keys - 1);
		Arbitrary<Long> timestamps = Arbitraries.longs().between(0, 40);
		Arbitrary<byte[]> values = Arbitraries.bytes().array(byte[].class).ofMaxSize(300);
		Arbitrary<Op> put = Combinators.combine(key, values, timestamps).as(Put::new);
		Arbitrary<Op> delete = Combinators.combine(key, timestamps).as(Delete::new);
		Arbitrary<Op> get = key.map(Get::new);
		Arbitrary<Op> scan = Combinators.combine(key, key.injectNull(0.3)).as(Scan::new);
		Arbitrary<Op> powerLoss = Arbitraries.of(Tear.DROP_UNSYNCED, Tear.TORN_PREFIX, Tear.TORN_PREFIX_THEN_ZEROS)
			.map(PowerLoss::new);
		return Arbitraries
			.frequencyOf(Tuple.of(50, put), Tuple.of(12, delete), Tuple.of(20, get), Tuple.of(5, scan),
					Tuple.of(2, Arbitraries.just(new Flush())), Tuple.of(3, Arbitraries.just(new ForceFlush())),
					Tuple.of(2, Arbitraries.just(new Compact())), Tuple.of(1, Arbitraries.just(new Reopen())),
					Tuple.of(crashes ? 1 : 0, Arbitraries.just(new Kill())), Tuple.of(crashes ? 2 : 0, powerLoss))
			.list()
			.ofMinSize(minSize)
			.ofMaxSize(maxSize);
	}

}
