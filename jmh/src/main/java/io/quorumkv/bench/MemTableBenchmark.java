package io.quorumkv.bench;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.lsm.memtable.MemTable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The LSM memtable's upsert, paid by every PUT: newer versions of keys already in a
 * memtable of {@code keys} entries (the steady state of a load test over a fixed key
 * space), with the load test's key format and 100-byte values.
 *
 * <pre>
 * java -jar jmh/target/benchmarks.jar MemTableBenchmark -f 1 -wi 3 -w 2s -i 5 -r 2s
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class MemTableBenchmark {

	@Param({ "100000" })
	public int keys;

	private MemTable table;

	private byte[][] keyBytes;

	private final byte[] value = new byte[100];

	private long timestamp;

	private int next;

	@Setup(Level.Trial)
	public void setUp() {
		// The engine's default memtable size: an index sized for its keys.
		this.table = new MemTable(64L << 20);
		this.keyBytes = new byte[this.keys][];
		for (int i = 0; i < this.keys; i++) {
			this.keyBytes[i] = ("k" + i).getBytes(StandardCharsets.UTF_8);
			this.table.put(Entry.value(this.keyBytes[i], this.value, ++this.timestamp));
		}
	}

	@Benchmark
	public boolean updateExistingKey() {
		// A fixed odd stride walks every key in a scattered order.
		this.next = (this.next + 7919) % this.keys;
		return this.table.put(Entry.value(this.keyBytes[this.next], this.value, ++this.timestamp));
	}

}
