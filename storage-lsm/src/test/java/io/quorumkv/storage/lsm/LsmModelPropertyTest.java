package io.quorumkv.storage.lsm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.contract.ModelStorage;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import org.jspecify.annotations.Nullable;

/**
 * Random sequences of operations against the engine and the reference model must give the
 * same answers. A 4 KiB memtable, tiny tables and levels make flushes, compactions
 * (including trivial moves and full compactions) and reopens happen every few steps. 60
 * tries of 50 to 300 steps: some 10,000 steps per run.
 */
class LsmModelPropertyTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	private static final int KEYS = 120;

	sealed interface Op permits Put, Delete, Get, Scan, Flush, ForceFlush, Compact, Reopen {

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

	record Flush() implements Op {
	}

	record ForceFlush() implements Op {
	}

	record Compact() implements Op {
	}

	record Reopen() implements Op {
	}

	static byte[] key(int i) {
		return ("k" + (i * 7919 % KEYS)).getBytes(StandardCharsets.UTF_8);
	}

	@Provide
	Arbitrary<List<Op>> operations() {
		Arbitrary<Integer> keys = Arbitraries.integers().between(0, KEYS - 1);
		Arbitrary<Long> timestamps = Arbitraries.longs().between(0, 40);
		Arbitrary<byte[]> values = Arbitraries.bytes().array(byte[].class).ofMaxSize(300);
		Arbitrary<Op> put = Combinators.combine(keys, values, timestamps).as(Put::new);
		Arbitrary<Op> delete = Combinators.combine(keys, timestamps).as(Delete::new);
		Arbitrary<Op> get = keys.map(Get::new);
		Arbitrary<Op> scan = Combinators.combine(keys, keys.injectNull(0.3)).as(Scan::new);
		Arbitrary<Op> op = Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(50, put), net.jqwik.api.Tuple.of(10, delete),
				net.jqwik.api.Tuple.of(20, get), net.jqwik.api.Tuple.of(5, scan),
				net.jqwik.api.Tuple.of(2, Arbitraries.just(new Flush())),
				net.jqwik.api.Tuple.of(3, Arbitraries.just(new ForceFlush())),
				net.jqwik.api.Tuple.of(2, Arbitraries.just(new Compact())),
				net.jqwik.api.Tuple.of(1, Arbitraries.just(new Reopen())));
		return op.list().ofMinSize(50).ofMaxSize(300);
	}

	static LsmOptions options(Path dir) {
		return LsmOptions.defaults(dir)
			.withMemtableSize(4096)
			.withBlockSize(256)
			.withCompaction(2, 8 << 10, 2, 4096)
			.withMaxLevels(4)
			.withFsync(FsyncPolicy.NEVER)
			.withTombstoneGracePeriod(Duration.ofDays(365L * 1000));
	}

	@Property(tries = 60, shrinking = ShrinkingMode.BOUNDED)
	void behavesLikeTheModel(@ForAll("operations") List<Op> ops) throws Exception {
		Path dir = TestDirs.create("lsm-model");
		ModelStorage model = ModelStorage.inMemory();
		LsmStorage storage = LsmStorage.open(options(dir));
		try {
			for (Op op : ops) {
				storage = apply(op, storage, model, dir);
			}
			assertThat(storage.scan(key(0), null).collectList().block(TIMEOUT))
				.containsExactlyElementsOf(model.snapshot().tailMap(key(0), true).values());
			assertThat(storage.stats().healthy()).isTrue();
		}
		finally {
			storage.close();
			TestDirs.delete(dir);
		}
	}

	private LsmStorage apply(Op op, LsmStorage storage, ModelStorage model, Path dir) throws Exception {
		switch (op) {
			case Put p -> {
				Entry e = Entry.value(key(p.key()), p.value(), p.timestamp());
				storage.upsert(e).block(TIMEOUT);
				model.apply(e);
			}
			case Delete d -> {
				Entry e = Entry.tombstone(key(d.key()), d.timestamp());
				storage.upsert(e).block(TIMEOUT);
				model.apply(e);
			}
			case Get g ->
				assertThat(storage.get(key(g.key())).block(TIMEOUT)).as("%s", op).isEqualTo(model.find(key(g.key())));
			case Scan s -> {
				byte[] from = key(s.from());
				byte[] to = (s.to() != null) ? key(s.to()) : null;
				List<Entry> expected = new ArrayList<>(model.scan(from, to).collectList().block(TIMEOUT));
				assertThat(storage.scan(from, to).collectList().block(TIMEOUT)).as("%s", op)
					.containsExactlyElementsOf(expected);
			}
			case Flush f -> storage.flush().block(TIMEOUT);
			case ForceFlush f -> storage.forceFlush().get(60, TimeUnit.SECONDS);
			case Compact c -> storage.forceCompaction().get(60, TimeUnit.SECONDS);
			case Reopen r -> {
				storage.close();
				return LsmStorage.open(options(dir));
			}
		}
		return storage;
	}

}
