package io.quorumkv.bench.report;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.NodeList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** Builds a report from a raw folder laid out like scripts/loadtest.sh writes it. */
class LoadReportBuilderTests {

	@TempDir
	Path temp;

	private Path raw;

	private Path out;

	@BeforeEach
	void rawFolder() throws Exception {
		this.raw = this.temp.resolve("raw");
		this.out = this.temp.resolve("report");
		scenario("01-h2-n1-put-20k", "wrk2/put-rate20000-c64.txt",
				"name=h2 put 20k\nbackend=h2\nnodes=1\nop=put\nrate=20000\n");
		scenario("02-h2-n1-put-60k", "wrk2/put-rate60000-saturated.txt",
				"name=h2 put 60k\nbackend=h2\nnodes=1\nop=put\nrate=60000\n");
		scenario("03-lsm-n3-get", "wrk/get-closed-loop-c64.txt",
				"name=lsm get closed\nbackend=lsm\nnodes=3\nreplicas=2/3\nop=get\nrate=40000\n");
		Files.writeString(this.raw.resolve("03-lsm-n3-get/flame-cpu.html"), "<html>flame</html>");
		Files.writeString(this.raw.resolve("setup.properties"),
				"machine.cpus=2\nmachine.kernel=Linux 6.1\njava.version=25.0.1\ngit.commit=0f97963\ntool=wrk2\n");
		Files.writeString(this.raw.resolve("NOTE.md"), "A pipeline test, not a benchmark.");
		Files.createDirectories(this.raw.resolve("jmh"));
		Files.writeString(this.raw.resolve("jmh/result.json"), Samples.read("jmh/storage-sample.json"));
	}

	private void scenario(String id, String sample, String properties) throws Exception {
		Path dir = Files.createDirectories(this.raw.resolve(id));
		Files.writeString(dir.resolve("measure.txt"), Samples.read(sample));
		Files.writeString(dir.resolve("scenario.properties"), properties);
		Files.writeString(dir.resolve("command.txt"),
				"wrk2 -t1 -c64 -d60s -R20000 --latency -U http://127.0.0.1:8081\n");
	}

	@Test
	void writesTheMarkdownTables() throws Exception {
		Path readme = LoadReportBuilder.build("demo", this.raw, this.out, List.of());
		String md = Files.readString(readme);
		assertThat(readme).isEqualTo(this.out.resolve("README.md"));
		assertThat(md).startsWith("# Load report: demo\n\nA pipeline test, not a benchmark.");
		assertThat(md).contains("| CPUs (nproc) | 2 |", "| QuorumKV commit | 0f97963 |",
				"| load model | wrk2: constant rate, latency corrected for coordinated omission |");
		assertThat(md).contains("| scenario | backend | nodes | replicas | op | conns | duration | target rate "
				+ "| achieved req/s | p50 | p90 | p99 | p99.9 | p99.99 | max | errors | non-2xx | timeouts |");
		assertThat(md).contains("| h2 put 20k | h2 | 1 | - | put | 64 | 60 s | 20000 | 19948 | 1.274 | 2.257 | 3.389 "
				+ "| 6.019 | 9.870 | 14.0 | 0 | 0 | 0 |");
		assertThat(md).contains("| h2 put 60k | h2 | 1 | - | put | 64 | 60 s | 60000 | 58942 | 1110.0 | 1965.1 "
				+ "| 2490.4 | 2658.3 | 2680.0 | 2684.9 | 0 | 0 | 0 |");
		assertThat(md).contains("| lsm get closed | lsm | 3 | 2/3 | get | 64 | 20.03 s | closed loop | 68702 | 0.474 "
				+ "| 2.125 | 12.4 | 78.1 | - | 147.3 | 0 | 528877 | 0 |");
		assertThat(md).contains("![Latency by percentile: PUT](latency-put.svg)",
				"![Latency by percentile: GET](latency-get.svg)", "![Throughput](throughput.svg)");
		assertThat(md).contains(
				"- lsm get closed, cpu: [flamegraphs/03-lsm-n3-get-cpu.html](flamegraphs/03-lsm-n3-get-cpu.html)");
		assertThat(this.out.resolve("flamegraphs/03-lsm-n3-get-cpu.html")).hasContent("<html>flame</html>");
		assertThat(md).contains("| StorageBenchmark.put | {backend=h2, valueSize=100} | thrpt | 1 | 41234.567 "
				+ "| ± 1523.250 | ops/s |");
		assertThat(md)
			.contains("- `01-h2-n1-put-20k`: `wrk2 -t1 -c64 -d60s -R20000 --latency -U http://127.0.0.1:8081`");
		assertThat(md).doesNotContain("†", "Read with care");
	}

	@Test
	void appendsTheWrittenAnalysisKeptBesideTheReport() throws Exception {
		Files.createDirectories(this.out);
		Files.writeString(this.out.resolve(LoadReportBuilder.ANALYSIS), "The LSM leads.\n");
		String md = Files.readString(LoadReportBuilder.build("demo", this.raw, this.out, List.of()));
		assertThat(md).endsWith("## Analysis\n\nThe LSM leads.\n");
		String again = Files.readString(LoadReportBuilder.build("demo", this.raw, this.out, List.of()));
		assertThat(again).isEqualTo(md);
	}

	@Test
	void statesTheFaultsOfAKillScenario() throws Exception {
		// Recorded by scripts/loadtest.sh (kill=3@12 restart=15, 3/3 PUT) on a 2-core
		// machine
		// busy with another cluster's load test: hence the seconds of latency.
		Path dir = Files.createDirectories(this.raw.resolve("04-n3-put-3of3-kill"));
		for (String file : List.of("measure.txt", "events.txt", "scenario.properties", "command.txt")) {
			Files.writeString(dir.resolve(file), Samples.read("faults/n3-put-3of3-kill/" + file));
		}
		String md = Files.readString(LoadReportBuilder.build("demo", this.raw, this.out, List.of()));
		assertThat(md).contains("| n3-put-3of3-kill † | lsm | 3 | 3/3 | put | 8 | 20 s | 300 | 248 | 6185.0 | 7483.4 "
				+ "| 7770.1 | 7815.2 | 7831.6 | 7827.5 | 0 | 3531 (5xx: 3531, 504: 3531) | 0 |");
		assertThat(md).contains("† Faults during the measured run, in seconds from its start:\n\n"
				+ "- n3-put-3of3-kill: node 3 killed (SIGKILL) at 12.1 s, restarted at 15.1 s, ready again at 26.6 s "
				+ "(after the run ended), in a 20 s measured run. wrk2 counted 3531 non-2xx (5xx: 3531, 504: 3531), "
				+ "0 socket errors and 0 timeouts over the whole run.\n");
		assertThat(md).contains("- n3-put-3of3-kill: 248 of the 300 requests/s asked for: the nodes (or the load "
				+ "generator) fell behind, so its latency figures are mostly time spent queueing.");
		// The faults are stated under the table, before the charts.
		assertThat(md.indexOf("† Faults")).isBetween(md.indexOf("| n3-put-3of3-kill †"), md.indexOf("## Charts"));
	}

	@Test
	void saysWhenAPlannedFaultLeftNoEvents() throws Exception {
		scenario("04-n3-put-kill", "wrk2/put-rate20000-c64.txt",
				"name=n3 kill\nbackend=lsm\nnodes=3\nop=put\nrate=20000\nkill=3@20\nrestart=40\n");
		String md = Files.readString(LoadReportBuilder.build("demo", this.raw, this.out, List.of()));
		assertThat(md).contains("| n3 kill † | lsm | 3 |",
				"- n3 kill: `kill=3@20` `restart=40` was planned, but no event was recorded (no events.txt): the fault "
						+ "may not have happened. wrk2 counted 0 non-2xx, 0 socket errors and 0 timeouts over the whole run.");
	}

	@Test
	void refusesAnEventsFileItCannotRead() throws Exception {
		scenario("04-n3-put-kill", "wrk2/put-rate20000-c64.txt", "name=n3 kill\nop=put\nkill=3@20\n");
		Files.writeString(this.raw.resolve("04-n3-put-kill/events.txt"), "at_s=20.0 event=pause node=3\n");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LoadReportBuilder.build("demo", this.raw, this.out, List.of()))
			.withMessageContaining("04-n3-put-kill/events.txt: Unknown fault event pause");
	}

	@Test
	void warnsOfSocketErrorsAndOfARunBehindItsRate() throws Exception {
		scenario("04-lsm-n1-killed", "wrk2/put-rate300-node1-killed.txt",
				"name=n1 killed\nbackend=lsm\nnodes=1\nop=put\nrate=300\n");
		String md = Files.readString(LoadReportBuilder.build("demo", this.raw, this.out, List.of()));
		assertThat(md).contains("| n1 killed | lsm | 1 | - | put | 8 | 20.17 s | 300 | 179 |", "| 264674 | 0 | 4 |");
		assertThat(md).contains("Read with care:\n\n- n1 killed: 264674 socket errors (connect 0, read 11, write "
				+ "264663) and 4 timeouts; its latency figures describe only the requests that were answered.\n"
				+ "- n1 killed: 179 of the 300 requests/s asked for:");
	}

	@Test
	void writesValidSvgWithOneSeriesPerScenario() throws Exception {
		LoadReportBuilder.build("demo", this.raw, this.out, List.of());
		Document put = parseXml(this.out.resolve("latency-put.svg"));
		assertThat(put.getDocumentElement().getTagName()).isEqualTo("svg");
		assertThat(texts(put)).contains("demo: Latency by percentile: PUT", "h2 put 20k", "h2 put 60k")
			.doesNotContain("lsm get closed");
		assertThat(texts(parseXml(this.out.resolve("latency-get.svg")))).contains("lsm get closed");
		assertThat(texts(parseXml(this.out.resolve("throughput.svg")))).contains("target rate", "achieved",
				"h2 put 20k", "h2 put 60k", "lsm get closed", "requests/s");
	}

	@Test
	void writesTheSameFilesForTheSameData() throws Exception {
		LoadReportBuilder.build("demo", this.raw, this.out, List.of());
		Path again = this.temp.resolve("again");
		LoadReportBuilder.build("demo", this.raw, again, List.of());
		for (String file : List.of("README.md", "latency-put.svg", "latency-get.svg", "throughput.svg")) {
			assertThat(again.resolve(file)).hasSameBinaryContentAs(this.out.resolve(file));
		}
	}

	@Test
	void acceptsMoreJmhFilesAndSkipsBrokenRuns() throws Exception {
		Path extra = this.temp.resolve("more.json");
		Files.writeString(extra, Samples.read("jmh/storage-sample.json"));
		Files.writeString(Files.createDirectories(this.raw.resolve("04-broken")).resolve("measure.txt"), "killed");
		String md = Files.readString(LoadReportBuilder.build("demo", this.raw, this.out, List.of(extra)));
		assertThat(md.lines().filter((line) -> line.startsWith("| PlacementBenchmark.replicasFor"))).hasSize(2)
			.allMatch((line) -> line.contains("| 87.250 | - | ns/op |"));
		assertThat(md).doesNotContain("04-broken");
	}

	@Test
	void showsAPacedWrkRunsRateAsACap() throws Exception {
		scenario("05-h2-put-paced", "wrk/put-closed-loop-c64.txt",
				"name=h2 put paced\nbackend=h2\nnodes=1\nop=put\nrate=200\npaced=yes\n");
		String md = Files.readString(LoadReportBuilder.build("demo", this.raw, this.out, List.of()));
		assertThat(md).contains("| h2 put paced | h2 | 1 | - | put | 64 | 20.1 s | ≤ 200 (paced) | 47608 |");
		assertThat(texts(parseXml(this.out.resolve("throughput.svg")))).contains("h2 put paced");
	}

	@Test
	void requiresNameRawAndOut() {
		assertThat(LoadReportBuilder
			.parseArgs(new String[] { "--name", "n", "--raw", "r", "--out", "o", "--jmh", "a", "--jmh", "b" }))
			.containsEntry("jmh", List.of("a", "b"));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LoadReportBuilder.parseArgs(new String[] { "--name", "n", "--raw", "r" }))
			.withMessage("Missing --out");
		assertThatIllegalArgumentException().isThrownBy(() -> LoadReportBuilder.parseArgs(new String[] { "--bogus" }));
	}

	private static Document parseXml(Path file) throws Exception {
		DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
		// JFreeSVG writes the SVG 1.0 DOCTYPE; never fetch its DTD.
		factory.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
		factory.setNamespaceAware(true);
		DocumentBuilder builder = factory.newDocumentBuilder();
		return builder.parse(file.toFile());
	}

	private static List<String> texts(Document svg) {
		NodeList nodes = svg.getElementsByTagNameNS("http://www.w3.org/2000/svg", "text");
		List<String> texts = new ArrayList<>();
		for (int i = 0; i < nodes.getLength(); i++) {
			texts.add(nodes.item(i).getTextContent());
		}
		return texts;
	}

}
