package io.quorumkv.bench.report;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.quorumkv.bench.report.YcsbLatency.Percentiles;

import static org.assertj.core.api.Assertions.assertThat;

/** Percentiles of YCSB's HdrHistogram logs with the run's first seconds left out. */
class YcsbLatencyTests {

	@TempDir
	Path folder;

	/**
	 * A recorded log (QuorumKV at 1,000 ops/s, workload A, 06:07Z): its whole run gives
	 * YCSB's own summary (p99 559,615 us, made by the client's first second), the run
	 * after 10 s its steady figures.
	 */
	@Test
	void theRecordedRunsStartIsWhatMadeItsP99() throws Exception {
		Path log = this.folder.resolve("run-Intended-READ.hdr");
		Files.writeString(log, Samples.read("ycsb-a-rate-Intended-READ.hdr"));
		Percentiles whole = YcsbLatency.settled(log, 0).orElseThrow();
		assertThat(whole.count()).isEqualTo(14962);
		assertThat(whole.p99()).isBetween(559_000L, 560_200L);
		assertThat(whole.max()).isBetween(664_000L, 665_000L);
		Percentiles settled = YcsbLatency.settled(log, 10).orElseThrow();
		// Its intervals start at 0, 4.4, 9.4, 14.4, 19.4 and 24.4 s: the last three are
		// kept.
		assertThat(settled.count()).isBetween(7_400L, 7_700L);
		assertThat(settled.p99()).isLessThan(20_000L);
		assertThat(settled.p50()).isLessThan(2_000L);
	}

	@Test
	void intervalsStartingInTheSettleTimeAreLeftOut() throws Exception {
		Path log = this.folder.resolve("log.hdr");
		writeLog(log, 1_000_000, interval(1_000_000, 900_000, 100), interval(1_005_000, 5_000, 100),
				interval(1_010_000, 2_000, 100));
		assertThat(YcsbLatency.settled(log, 0).orElseThrow().max()).isBetween(899_000L, 901_000L);
		Percentiles afterFive = YcsbLatency.settled(log, 5).orElseThrow();
		assertThat(afterFive.count()).isEqualTo(200);
		assertThat(afterFive.max()).isBetween(4_990L, 5_010L);
		assertThat(afterFive.p50()).isBetween(1_990L, 2_010L);
		Percentiles afterTen = YcsbLatency.settled(log, 10).orElseThrow();
		assertThat(afterTen.count()).isEqualTo(100);
		assertThat(afterTen.max()).isBetween(1_990L, 2_010L);
		assertThat(YcsbLatency.settled(log, 11)).isEmpty();
	}

	@Test
	void aMissingLogHasNoFigures() {
		assertThat(YcsbLatency.settled(this.folder.resolve("none.hdr"), 10)).isEmpty();
	}

	/**
	 * Writes an HdrHistogram log as YCSB does: a start time, then one histogram per
	 * interval.
	 */
	static void writeLog(Path file, long startMillis, Histogram... intervals) throws IOException {
		try (PrintStream out = new PrintStream(Files.newOutputStream(file), false, StandardCharsets.UTF_8)) {
			HistogramLogWriter writer = new HistogramLogWriter(out);
			writer.outputLogFormatVersion();
			writer.outputStartTime(startMillis);
			writer.setBaseTime(startMillis);
			writer.outputLegend();
			for (Histogram interval : intervals) {
				writer.outputIntervalHistogram(interval);
			}
		}
	}

	/**
	 * An interval starting at {@code startMillis} of {@code count} operations of
	 * {@code micros}.
	 */
	static Histogram interval(long startMillis, long micros, int count) {
		Histogram histogram = new Histogram(3);
		histogram.recordValueWithCount(micros, count);
		histogram.setStartTimeStamp(startMillis);
		histogram.setEndTimeStamp(startMillis + 5_000);
		return histogram;
	}

}
