package io.quorumkv.bench.report;

import java.io.FileNotFoundException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;

import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;

/**
 * The latency percentiles of one operation of a YCSB run, read from the HdrHistogram log
 * YCSB writes with {@code hdrhistogram.fileoutput=true} ({@code run-Intended-READ.hdr}:
 * one interval histogram per {@code status.interval}), leaving out the intervals that
 * start in the run's first seconds.
 *
 * <p>
 * Why: a fixed-rate run is one new YCSB JVM, and its first second (class loading, JIT,
 * the first connections) delays every operation due then. Intended latency counts that
 * delay in full, so at 1,000 ops/s a 0.7 s start alone made p99 of a 30 s run 400-800 ms
 * for every store, while the rest of the run measured 4-6 ms (the 06:07Z report). wrk2
 * drops its first 10 s for the same reason; the report does the same with {@code settle}
 * seconds and says so.
 *
 * <pre>
 * java -cp jmh/target/benchmarks.jar io.quorumkv.bench.report.YcsbLatency FILE.hdr SETTLE_SECONDS
 * </pre> prints {@code count p50 p99 p99.9 max} in microseconds, or nothing when the file
 * is missing or nothing is left after the settle time.
 */
public final class YcsbLatency {

	private YcsbLatency() {
	}

	public static void main(String[] args) {
		if (args.length != 2) {
			System.err.println("usage: YcsbLatency FILE.hdr SETTLE_SECONDS");
			System.exit(2);
		}
		settled(Path.of(args[0]), Double.parseDouble(args[1])).ifPresent((p) -> System.out
			.println(String.format(Locale.ROOT, "%d %d %d %d %d", p.count(), p.p50(), p.p99(), p.p999(), p.max())));
	}

	/**
	 * The percentiles of every interval of {@code log} that starts at least
	 * {@code settleSeconds} after its first interval; empty when the file is missing or
	 * holds no such operation.
	 */
	static Optional<Percentiles> settled(Path log, double settleSeconds) {
		if (!Files.isRegularFile(log)) {
			return Optional.empty();
		}
		Histogram total = new Histogram(3);
		try (HistogramLogReader reader = new HistogramLogReader(log.toFile())) {
			long first = -1;
			EncodableHistogram interval;
			while ((interval = reader.nextIntervalHistogram()) != null) {
				if (first < 0) {
					first = interval.getStartTimeStamp();
				}
				if (interval.getStartTimeStamp() - first >= settleSeconds * 1000
						&& interval instanceof Histogram histogram) {
					total.add(histogram);
				}
			}
		}
		catch (FileNotFoundException ex) {
			throw new UncheckedIOException(ex);
		}
		if (total.getTotalCount() == 0) {
			return Optional.empty();
		}
		return Optional.of(new Percentiles(total.getTotalCount(), total.getValueAtPercentile(50),
				total.getValueAtPercentile(99), total.getValueAtPercentile(99.9), total.getMaxValue()));
	}

	/** Microseconds, as YCSB records them. */
	record Percentiles(long count, long p50, long p99, long p999, long max) {
	}

}
