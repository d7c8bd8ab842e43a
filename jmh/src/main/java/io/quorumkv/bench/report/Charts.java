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
import java.util.Map;

import io.quorumkv.bench.report.LoadRun.LatencyPoint;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.NumberAxis;
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
import org.jfree.chart.ui.RectangleInsets;
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
					series.add(Math.log10(1.0 / (1.0 - point.fraction())), Math.log10(point.millis()));
				}
			}
			dataset.addSeries(series);
		}
		JFreeChart chart = ChartFactory.createXYLineChart(title, "percentile", "latency (ms, log scale)", dataset,
				PlotOrientation.VERTICAL, true, false, false);
		XYPlot plot = chart.getXYPlot();
		// Both axes carry log10 values with ticks at whole decades, labelled in plain
		// text
		// (JFreeChart's LogAxis labels become glyph outlines in SVG).
		NumberAxis percentile = (NumberAxis) plot.getDomainAxis();
		percentile.setTickUnit(new NumberTickUnit(1.0, new DecadeFormat(true)));
		percentile.setRange(0, decadeAbove(dataset.getDomainUpperBound(false), 2));
		NumberAxis latency = (NumberAxis) plot.getRangeAxis();
		latency.setTickUnit(new NumberTickUnit(1.0, new DecadeFormat(false)));
		double lowest = dataset.getRangeLowerBound(false);
		double low = Double.isNaN(lowest) ? -1 : Math.floor(lowest);
		latency.setRange(low, decadeAbove(dataset.getRangeUpperBound(false), low + 1));
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

	/**
	 * Grouped vertical bars: one group per category, one bar per series in it. With
	 * {@code log} the values are drawn on a log10 scale with ticks at whole decades (a
	 * value of 0 or less is left out there).
	 * @param title the chart title
	 * @param categoryLabel what the groups are
	 * @param valueLabel what the bars measure
	 * @param values category to series to value, in the order to draw
	 * @param log whether the value axis is logarithmic
	 * @return an SVG document
	 */
	static String groupedBars(String title, String categoryLabel, String valueLabel,
			Map<String, Map<String, Double>> values, boolean log) {
		DefaultCategoryDataset dataset = new DefaultCategoryDataset();
		values.forEach((category, bars) -> bars.forEach((series, value) -> {
			if (!log) {
				dataset.addValue(value, series, category);
			}
			else if (value > 0) {
				dataset.addValue(Math.log10(value), series, category);
			}
		}));
		JFreeChart chart = ChartFactory.createBarChart(title, categoryLabel,
				log ? valueLabel + " (log scale)" : valueLabel, dataset, PlotOrientation.VERTICAL, true, false, false);
		CategoryPlot plot = chart.getCategoryPlot();
		BarRenderer renderer = (BarRenderer) plot.getRenderer();
		renderer.setBarPainter(new StandardBarPainter());
		renderer.setShadowVisible(false);
		for (int i = 0; i < dataset.getRowCount(); i++) {
			renderer.setSeriesPaint(i, PALETTE[i % PALETTE.length]);
		}
		if (log) {
			// Bars start at the decade below the smallest value; ticks at whole decades
			// in plain text (see latencyChart).
			NumberAxis axis = (NumberAxis) plot.getRangeAxis();
			axis.setTickUnit(new NumberTickUnit(1.0, new DecadeFormat(false)));
			double lowest = dataset.getRowCount() == 0 ? 0 : Math.floor(lowestValue(dataset));
			axis.setRange(lowest, decadeAbove(maximumValue(dataset), lowest + 1));
			renderer.setBase(lowest);
		}
		plot.setBackgroundPaint(Color.WHITE);
		plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
		style(chart);
		return toSvg(chart);
	}

	private static double lowestValue(DefaultCategoryDataset dataset) {
		double lowest = Double.MAX_VALUE;
		for (int row = 0; row < dataset.getRowCount(); row++) {
			for (int column = 0; column < dataset.getColumnCount(); column++) {
				Number value = dataset.getValue(row, column);
				if (value != null) {
					lowest = Math.min(lowest, value.doubleValue());
				}
			}
		}
		return (lowest == Double.MAX_VALUE) ? 0 : lowest;
	}

	private static double maximumValue(DefaultCategoryDataset dataset) {
		double highest = Double.NaN;
		for (int row = 0; row < dataset.getRowCount(); row++) {
			for (int column = 0; column < dataset.getColumnCount(); column++) {
				Number value = dataset.getValue(row, column);
				if (value != null) {
					highest = Double.isNaN(highest) ? value.doubleValue() : Math.max(highest, value.doubleValue());
				}
			}
		}
		return highest;
	}

	/** The whole decade at or above a log10 value, at least {@code minimum}. */
	private static double decadeAbove(double log10, double minimum) {
		return Double.isNaN(log10) ? minimum : Math.max(minimum, Math.ceil(log10));
	}

	private static void style(JFreeChart chart) {
		chart.setBackgroundPaint(Color.WHITE);
		chart.getTitle().setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
		chart.setAntiAlias(true);
		// Room for the last tick label at the right edge.
		chart.setPadding(new RectangleInsets(4, 4, 4, 28));
	}

	private static String toSvg(JFreeChart chart) {
		SVGGraphics2D graphics = new SVGGraphics2D(WIDTH, HEIGHT);
		// A fixed id prefix (the default is time-based): the same data gives the same
		// file.
		graphics.setDefsKeyPrefix("qkv-");
		chart.draw(graphics, new Rectangle(WIDTH, HEIGHT));
		return graphics.getSVGDocument();
	}

	/**
	 * Labels a log10 tick: {@code 10^v} as a percentile of {@code 1/(1-p)} (1 is "90%", 3
	 * is "99.9%"), or as milliseconds (-1 is "0.1").
	 */
	private static final class DecadeFormat extends NumberFormat {

		private final boolean percentile;

		DecadeFormat(boolean percentile) {
			this.percentile = percentile;
		}

		@Override
		public StringBuffer format(double number, StringBuffer toAppendTo, FieldPosition pos) {
			double value = Math.pow(10, number);
			if (this.percentile) {
				return toAppendTo.append(new DecimalFormat("0.#####").format(100.0 * (1.0 - 1.0 / value))).append('%');
			}
			return toAppendTo.append(new DecimalFormat("0.###").format(value));
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
