package io.quorumkv.bench.report;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * How long the report builder takes to parse one wrk2 output with its two percentile
 * spectra (about 250 lines). Small on purpose: it keeps {@code benchmarks.jar} runnable
 * and its JMH set-up checked until the storage benchmarks arrive in
 * {@code io.quorumkv.bench}.
 *
 * <pre>{@code
 * java -jar jmh/target/benchmarks.jar WrkOutputParserBenchmark -rf json
 * }</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class WrkOutputParserBenchmark {

	private String output = "";

	@Setup
	public void load() {
		try (InputStream in = WrkOutputParserBenchmark.class.getResourceAsStream("wrk2-sample.txt")) {
			if (in == null) {
				throw new IllegalStateException("wrk2-sample.txt is missing from the jar");
			}
			this.output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	@Benchmark
	public LoadRun parseWrk2Output() {
		return WrkOutputParser.parse(this.output);
	}

}
