package io.quorumkv.bench.report;

import io.quorumkv.bench.report.FaultEvent.Kind;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** Reads the events.txt that scripts/loadtest.sh writes for kill=/restart= scenarios. */
class FaultEventTests {

	@Test
	void readsARecordedKillAndRestart() {
		assertThat(FaultEvent.parse(Samples.read("faults/n3-put-3of3-kill/events.txt"))).containsExactly(
				new FaultEvent(12.1, Kind.KILL, 3), new FaultEvent(15.1, Kind.RESTART, 3),
				new FaultEvent(26.6, Kind.READY, 3));
	}

	@Test
	void readsFailedStepsAndSkipsCommentsAndBlankLines() {
		String text = "# a comment\n\nat_s=20.0 event=kill-failed node=2\n  at_s=41.5 event=restart-failed node=3  \n";
		assertThat(FaultEvent.parse(text)).containsExactly(new FaultEvent(20.0, Kind.KILL_FAILED, 2),
				new FaultEvent(41.5, Kind.RESTART_FAILED, 3));
		assertThat(FaultEvent.parse("")).isEmpty();
	}

	@Test
	void namesKindsAsTheScriptWritesThem() {
		assertThat(Kind.values()).extracting(Kind::fileName)
			.containsExactly("kill", "kill-failed", "restart", "ready", "restart-failed");
	}

	@Test
	void rejectsWhatIsNotAnEvent() {
		assertThatIllegalArgumentException().isThrownBy(() -> FaultEvent.parse("at_s=1.0 event=kill"))
			.withMessageContaining("at_s=1.0 event=kill");
		assertThatIllegalArgumentException().isThrownBy(() -> FaultEvent.parse("at_s=1.0 event=pause node=2"))
			.withMessage("Unknown fault event pause");
		assertThatIllegalArgumentException().isThrownBy(() -> FaultEvent.parse("at_s=soon event=kill node=2"))
			.withMessageContaining("bad number");
	}

}
