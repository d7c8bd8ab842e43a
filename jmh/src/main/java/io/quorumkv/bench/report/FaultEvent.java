package io.quorumkv.bench.report;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * One step of a scenario's fault schedule ({@code kill=NODE@SECONDS},
 * {@code restart=SECONDS}), as {@code scripts/loadtest.sh} recorded it during the
 * measured run.
 *
 * <p>
 * The format of a scenario's {@code events.txt}: one event per line,
 * {@code at_s=SECONDS event=KIND node=NODE}, in the order they happened; blank lines and
 * lines starting with {@code #} are comments. {@code at_s} counts from the start of the
 * load generator's measured run, so it compares with the run's duration.
 *
 * @param atSeconds seconds into the measured run
 * @param kind what happened
 * @param node the node it happened to (1-based, as {@code scripts/cluster.sh} numbers
 * nodes)
 */
public record FaultEvent(double atSeconds, Kind kind, int node) {

	public FaultEvent {
		Objects.requireNonNull(kind, "kind");
	}

	/**
	 * Reads an {@code events.txt}.
	 * @param text the file's content
	 * @return the events in file order
	 * @throws IllegalArgumentException when a line is not an event
	 */
	public static List<FaultEvent> parse(String text) {
		List<FaultEvent> events = new ArrayList<>();
		for (String line : text.split("\\R")) {
			String trimmed = line.strip();
			if (trimmed.isEmpty() || trimmed.startsWith("#")) {
				continue;
			}
			Map<String, String> pairs = WrkOutputParser.parseSummary("SUMMARY " + trimmed);
			String at = pairs.get("at_s");
			String event = pairs.get("event");
			String node = pairs.get("node");
			if (at == null || event == null || node == null) {
				throw new IllegalArgumentException("Not a fault event (at_s=.. event=.. node=..): " + trimmed);
			}
			try {
				events.add(new FaultEvent(Double.parseDouble(at), Kind.of(event), Integer.parseInt(node)));
			}
			catch (NumberFormatException ex) {
				throw new IllegalArgumentException("Not a fault event (bad number): " + trimmed, ex);
			}
		}
		return List.copyOf(events);
	}

	/** The steps of a fault schedule. */
	public enum Kind {

		/** SIGKILL sent ({@code scripts/cluster.sh kill}). */
		KILL("killed (SIGKILL)"),

		/** The kill failed: the node was not running. */
		KILL_FAILED("could not be killed"),

		/** Restart begun ({@code scripts/cluster.sh restart}). */
		RESTART("restarted"),

		/** The restarted node answered its readiness probe. */
		READY("ready again"),

		/** The restarted node did not become ready in time. */
		RESTART_FAILED("did not come back");

		private final String phrase;

		Kind(String phrase) {
			this.phrase = phrase;
		}

		/** The name in {@code events.txt}: {@code kill}, {@code restart-failed}... */
		public String fileName() {
			return name().toLowerCase(Locale.ROOT).replace('_', '-');
		}

		/** What happened to the node, for the report: "killed (SIGKILL)". */
		public String phrase() {
			return this.phrase;
		}

		static Kind of(String fileName) {
			return Arrays.stream(values())
				.filter((kind) -> kind.fileName().equals(fileName))
				.findFirst()
				.orElseThrow(() -> new IllegalArgumentException("Unknown fault event " + fileName));
		}

	}

}
