package io.quorumkv.bench.report;

import io.quorumkv.bench.report.LoadRun.LatencyPoint;
import io.quorumkv.bench.report.LoadRun.SocketErrors;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.within;

/** Parses the real wrk2 and wrk outputs recorded under src/test/resources. */
class WrkOutputParserTests {

	private static final double EPS = 1e-9;

	@Nested
	class Wrk2Healthy {

		private final LoadRun run = WrkOutputParser.parse(Samples.read("wrk2/put-rate20000-c64.txt"));

		@Test
		void readsTheRunsShape() {
			assertThat(this.run.tool()).isEqualTo(LoadTool.WRK2);
			assertThat(this.run.threads()).isEqualTo(1);
			assertThat(this.run.connections()).isEqualTo(64);
			assertThat(this.run.requests()).isEqualTo(1_196_852);
			assertThat(this.run.durationSeconds()).isCloseTo(60.0, within(EPS));
			assertThat(this.run.requestsPerSecond()).isCloseTo(19947.53, within(EPS));
			assertThat(this.run.transferBytesPerSecond()).isCloseTo(837.64 * 1024, within(1e-6));
			assertThat(this.run.non2xx()).isZero();
			assertThat(this.run.socketErrors()).isEqualTo(SocketErrors.NONE);
		}

		@Test
		void keepsTheCorrectedDistributionAsPrinted() {
			assertThat(this.run.percentiles()).containsEntry(50.0, 1.27)
				.containsEntry(90.0, 2.26)
				.containsEntry(99.0, 3.39)
				.containsEntry(99.9, 6.02)
				.containsEntry(99.99, 9.87)
				.containsEntry(99.999, 12.30)
				.doesNotContainKey(100.0);
			// The max of the corrected histogram, not the uncorrected 9.160.
			assertThat(this.run.maxMillis()).isCloseTo(14.016, within(EPS));
		}

		@Test
		void prefersTheSummaryLinesFullPrecision() {
			assertThat(this.run.summary()).containsEntry("requests", "1196852").containsEntry("p99_ms", "3.389");
			assertThat(this.run.latencyMillis(99.0)).hasValue(3.389);
			assertThat(this.run.latencyMillis(50.0)).hasValue(1.274);
			// Not in the SUMMARY line: the printed figure.
			assertThat(this.run.latencyMillis(99.99)).hasValue(9.87);
			assertThat(this.run.maxLatencyMillis()).hasValue(14.016);
		}

		@Test
		void readsOnlyTheCorrectedSpectrum() {
			assertThat(this.run.spectrum()).hasSize(102);
			assertThat(this.run.spectrum().getFirst()).isEqualTo(new LatencyPoint(0.0, 0.051));
			assertThat(this.run.spectrum()).contains(new LatencyPoint(0.990625, 3.441));
			assertThat(this.run.spectrum().getLast()).isEqualTo(new LatencyPoint(1.0, 14.023));
			// 0.019 ms opens the uncorrected spectrum only.
			assertThat(this.run.spectrum()).noneMatch((point) -> point.millis() == 0.019);
			assertThat(this.run.chartPoints()).hasSize(101).allMatch((point) -> point.fraction() < 1.0);
		}

	}

	@Test
	void readsASaturatedWrk2RunInSeconds() {
		LoadRun run = WrkOutputParser.parse(Samples.read("wrk2/put-rate60000-saturated.txt"));
		assertThat(run.tool()).isEqualTo(LoadTool.WRK2);
		assertThat(run.requestsPerSecond()).isCloseTo(58941.90, within(EPS));
		assertThat(run.percentiles()).containsEntry(50.0, 1110.0).containsEntry(99.0, 2490.0);
		assertThat(run.latencyMillis(99.0)).hasValue(2490.367);
		assertThat(run.maxLatencyMillis()).hasValue(2684.928);
		assertThat(run.maxMillis()).isCloseTo(2684.928, within(EPS));
		assertThat(run.spectrum()).contains(new LatencyPoint(0.5, 1110.015));
		assertThat(run.transferBytesPerSecond()).isCloseTo(2.42 * 1024 * 1024, within(1e-6));
	}

	@Test
	void readsNon2xxAnswers() {
		LoadRun run = WrkOutputParser.parse(Samples.read("wrk2/get-rate40000-with-404s.txt"));
		assertThat(run.non2xx()).isEqualTo(13_820);
		assertThat(run.requests()).isEqualTo(2_393_664);
		assertThat(run.requestsPerSecond()).isCloseTo(39894.13, within(EPS));
		assertThat(run.maxLatencyMillis()).hasValue(25.440);
		assertThat(run.summary()).containsEntry("non2xx", "13820");
	}

	@Test
	void readsWrksClosedLoopFormat() {
		LoadRun run = WrkOutputParser.parse(Samples.read("wrk/put-closed-loop-c64.txt"));
		assertThat(run.tool()).isEqualTo(LoadTool.WRK);
		assertThat(run.requests()).isEqualTo(956_768);
		assertThat(run.durationSeconds()).isCloseTo(20.10, within(EPS));
		assertThat(run.requestsPerSecond()).isCloseTo(47607.78, within(EPS));
		assertThat(run.percentiles()).containsOnlyKeys(50.0, 75.0, 90.0, 99.0)
			.containsEntry(50.0, 0.737)
			.containsEntry(99.0, 336.20);
		assertThat(run.spectrum()).isEmpty();
		// Max from the Thread Stats line; the SUMMARY line's is more precise.
		assertThat(run.maxMillis()).isCloseTo(778.38, within(EPS));
		assertThat(run.maxLatencyMillis()).hasValue(778.381);
		// wrk prints no p99.9: it comes from the SUMMARY line.
		assertThat(run.latencyMillis(99.9)).hasValue(691.559);
		assertThat(run.latencyMillis(99.99)).isEmpty();
		assertThat(run.chartPoints()).extracting(LatencyPoint::fraction).containsExactly(0.5, 0.75, 0.9, 0.99, 0.999);
	}

	@Test
	void readsWrksMicrosecondsAndNon2xx() {
		LoadRun run = WrkOutputParser.parse(Samples.read("wrk/get-closed-loop-c64.txt"));
		assertThat(run.percentiles()).containsEntry(50.0, 0.474).containsEntry(75.0, 0.92);
		assertThat(run.non2xx()).isEqualTo(528_877);
		assertThat(run.transferBytesPerSecond()).isCloseTo(6.78 * 1024 * 1024, within(1e-6));
	}

	@Test
	void readsSocketErrors() {
		String output = Samples.read("wrk/get-closed-loop-c64.txt")
			.replace("Requests/sec:", "  Socket errors: connect 2, read 12, write 3, timeout 40\nRequests/sec:");
		LoadRun run = WrkOutputParser.parse(output);
		assertThat(run.socketErrors()).isEqualTo(new SocketErrors(2, 12, 3, 40));
		assertThat(run.socketErrors().errors()).isEqualTo(17);
	}

	@Test
	void readsWrk2sSocketErrorsAndTimeouts() {
		// Node 1 killed 12 s into a 20 s run at 300/s and restarted: wrk2 keeps
		// reconnecting and
		// counts every failed attempt; its histograms hold the answered requests only.
		LoadRun run = WrkOutputParser.parse(Samples.read("wrk2/put-rate300-node1-killed.txt"));
		assertThat(run.tool()).isEqualTo(LoadTool.WRK2);
		assertThat(run.socketErrors()).isEqualTo(new SocketErrors(0, 11, 264_663, 4));
		assertThat(run.socketErrors().errors()).isEqualTo(264_674);
		assertThat(run.requests()).isEqualTo(3603);
		assertThat(run.requestsPerSecond()).isCloseTo(178.60, within(EPS));
		assertThat(run.non2xx()).isZero();
		assertThat(run.summary()).containsEntry("sock_errors", "264678").containsEntry("timeout", "4");
		assertThat(run.maxLatencyMillis()).hasValue(7.292);
	}

	@Test
	void rejectsAnIncompleteOutput() {
		String output = Samples.read("wrk/put-closed-loop-c64.txt");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> WrkOutputParser.parse(output.substring(0, output.indexOf("  956768 requests"))))
			.withMessageContaining("Requests/sec");
	}

	@Test
	void namesSummaryKeysLikeTheLuaScripts() {
		assertThat(LoadRun.summaryKey(50.0)).isEqualTo("p50_ms");
		assertThat(LoadRun.summaryKey(99.0)).isEqualTo("p99_ms");
		assertThat(LoadRun.summaryKey(99.9)).isEqualTo("p999_ms");
		assertThat(LoadRun.summaryKey(99.99)).isEqualTo("p9999_ms");
	}

	@Test
	void parsesSummaryPairs() {
		assertThat(WrkOutputParser.parseSummary("SUMMARY requests=3 s404=1 odd"))
			.containsExactly(java.util.Map.entry("requests", "3"), java.util.Map.entry("s404", "1"));
	}

}
