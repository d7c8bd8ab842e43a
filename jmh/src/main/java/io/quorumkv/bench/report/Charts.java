package io.quorumkv.bench.report;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Rectangle;
import java.text.DecimalFormat;
import java.text.FieldPosition;
import java.text.NumberFormat;
import java.text.ParsePosition;
import java.util.List;

import io.quorumkv.bench.report.LoadRun.LatencyPoint;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.jfree.svg.SVGGraphics2D;

/**
 * Draws the report charts as SVG: latency by percentile (HdrHistogram style, the x axis
 * is {@code 1/(1-percentile)} on a log scale, labelled 90%, 99%, 99.9%...) and throughput
 * bars.
 */
final class Charts {

	private static final int WIDTH = 900;

	private static final int HEIGHT = 500;

	private static final Color[] PALETTE = { new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c),
			new Color(0xff7f0e), new Color(0x9467bd), new Color(0x8c564b), new Color(0xe377c2), new Color(0x7f7f7f) };

	private Charts() {
	}

	/**
	 * One line per scenario: latency against percentile.
	 * @param title the chart title
	 * @param runs the scenarios to compare
	 * @return an SVG document
	 */
	static String latencySpectrum(String title, List<ScenarioRun> runs) {
		return toSvg(latencyChart(title, runs));
	}

	static JFreeChart latencyChart(String title, List<ScenarioRun> runs) {
		XYSeriesCollection dataset = new XYSeriesCollection();
		for (ScenarioRun run : runs) {
			XYSeries series = new XYSeries(run.label(), false, true);
			for (LatencyPoint point : run.run().chartPoints()) {
				if (point.millis() > 0) {
					series.add(1.0 / (1.0 - point.fraction()), point.millis());
				}
			}
			dataset.addSeries(series);
		}
		JFreeChart chart = ChartFactory.createXYLineChart(title, "percentile", "latency (ms)", dataset,
				PlotOrientation.VERTICAL, true, false, false);
		XYPlot plot = chart.getXYPlot();
		LogAxis percentile = new LogAxis("percentile");
		percentile.setBase(10);
		percentile.setSmallestValue(1);
		percentile.setNumberFormatOverride(new PercentileFormat());
		plot.setDomainAxis(percentile);
		LogAxis latency = new LogAxis("latency (ms, log scale)");
		latency.setBase(10);
		latency.setSmallestValue(0.001);
		latency.setTickUnit(new NumberTickUnit(1.0));
		latency.setNumberFormatOverride(new DecimalFormat("0.###"));
		plot.setRangeAxis(latency);
		XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, false);
		for (int i = 0; i < runs.size(); i++) {
			renderer.setSeriesPaint(i, PALETTE[i % PALETTE.length]);
			renderer.setSeriesStroke(i, new BasicStroke(2f));
			// wrk gives a handful of percentiles: show them as points too.
			renderer.setSeriesShapesVisible(i, runs.get(i).run().spectrum().isEmpty());
		}
		plot.setRenderer(renderer);
		style(chart);
		plot.setBackgroundPaint(Color.WHITE);
		plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
		plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
		return chart;
	}

	/**
	 * Bars of the achieved throughput of each scenario, beside its target rate.
	 * @param title the chart title
	 * @param runs the scenarios
	 * @return an SVG document
	 */
	static String throughput(String title, List<ScenarioRun> runs) {
		return toSvg(throughputChart(title, runs));
	}

	static JFreeChart throughputChart(String title, List<ScenarioRun> runs) {
		DefaultCategoryDataset dataset = new DefaultCategoryDataset();
		boolean anyTarget = runs.stream().anyMatch((run) -> run.appliedRate() > 0);
		for (ScenarioRun run : runs) {
			if (anyTarget) {
				dataset.addValue(run.appliedRate(), "target rate", run.label());
			}
			dataset.addValue(run.run().requestsPerSecond(), "achieved", run.label());
		}
		JFreeChart chart = ChartFactory.createBarChart(title, "scenario", "requests/s", dataset,
				PlotOrientation.HORIZONTAL, true, false, false);
		CategoryPlot plot = chart.getCategoryPlot();
		BarRenderer renderer = (BarRenderer) plot.getRenderer();
		renderer.setBarPainter(new StandardBarPainter());
		renderer.setShadowVisible(false);
		renderer.setSeriesPaint(0, anyTarget ? Color.LIGHT_GRAY : PALETTE[0]);
		renderer.setSeriesPaint(1, PALETTE[0]);
		plot.setBackgroundPaint(Color.WHITE);
		plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
		style(chart);
		return chart;
	}

	private static void style(JFreeChart chart) {
		chart.setBackgroundPaint(Color.WHITE);
		chart.getTitle().setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
		chart.setAntiAlias(true);
	}

	private static String toSvg(JFreeChart chart) {
		SVGGraphics2D graphics = new SVGGraphics2D(WIDTH, HEIGHT);
		chart.draw(graphics, new Rectangle(WIDTH, HEIGHT));
		return graphics.getSVGDocument();
	}

	/** Labels {@code 1/(1-p)} ticks as percentiles: 10 is "90%", 1000 is "99.9%". */
	private static final class PercentileFormat extends NumberFormat {

		@Override
		public StringBuffer format(double number, StringBuffer toAppendTo, FieldPosition pos) {
			double percent = 100.0 * (1.0 - 1.0 / number);
			DecimalFormat format = new DecimalFormat("0.#####");
			return toAppendTo.append(format.format(percent)).append('%');
		}

		@Override
		public StringBuffer format(long number, StringBuffer toAppendTo, FieldPosition pos) {
			return format((double) number, toAppendTo, pos);
		}

		@Override
		public Number parse(String source, ParsePosition parsePosition) {
			throw new UnsupportedOperationException("Formatting only");
		}

	}

}
