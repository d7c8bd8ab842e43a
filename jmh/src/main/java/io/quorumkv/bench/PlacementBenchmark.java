package io.quorumkv.bench;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.cluster.Placement;
import io.quorumkv.service.cluster.PlacementStrategy;
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
 * The cost of finding a key's replicas, paid by the coordinator on every request:
 * {@code replicas(key, 3)} over 3, 5 and 10 nodes, for both strategies; and
 * {@code isReplica(key, 3, node)}, the question of a transfer's scan and a clean-up.
 *
 * <pre>
 * java -jar jmh/target/benchmarks.jar PlacementBenchmark -f 1 -wi 3 -w 2s -i 5 -r 2s -prof gc
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class PlacementBenchmark {

	private static final int KEYS = 4096;

	@Param({ "RENDEZVOUS", "CONSISTENT_HASH" })
	public PlacementStrategy strategy;

	@Param({ "3", "5", "10" })
	public int nodes;

	private Placement placement;

	private byte[][] keys;

	private String lastNode;

	private int next;

	@Setup(Level.Trial)
	public void setUp() {
		List<Node> list = new ArrayList<>();
		for (int i = 0; i < this.nodes; i++) {
			list.add(Node.of("http://127.0.0.1:" + (8081 + i)));
		}
		this.placement = this.strategy.create(list);
		this.lastNode = this.placement.nodes().getLast().id();
		this.keys = new byte[KEYS][];
		for (int i = 0; i < KEYS; i++) {
			this.keys[i] = ("key-" + i * 7919).getBytes(StandardCharsets.UTF_8);
		}
	}

	@Benchmark
	public List<Node> replicas3() {
		byte[] key = this.keys[this.next++ & (KEYS - 1)];
		return this.placement.replicas(key, 3);
	}

	/**
	 * Whether the last node is among the 3: what a transfer's scan and a clean-up ask of
	 * every entry they read ({@code -prof gc} shows what each allocates).
	 */
	@Benchmark
	public boolean isReplica3() {
		byte[] key = this.keys[this.next++ & (KEYS - 1)];
		return this.placement.isReplica(key, 3, this.lastNode);
	}

}
