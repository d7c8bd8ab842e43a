/**
 * Turns load-test outputs (wrk2 and wrk, with the QuorumKV lua scripts' {@code SUMMARY}
 * line) and JMH JSON results into the markdown and SVG reports under
 * {@code docs/reports/}. Entry point: {@link io.quorumkv.bench.report.LoadReportBuilder}.
 */
@NullMarked
package io.quorumkv.bench.report;

import org.jspecify.annotations.NullMarked;
