package io.quorumkv.service.nemesis;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;

import io.quorumkv.service.support.FaultFolders;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The test of the tests: the harness runs deliberately broken builds (the unchanged
 * {@code quorumkv.jar} with {@link BrokenBuildJar} on its class path, the storage or the
 * answer to a conditional GET misbehaving as a file says) and the checker must catch each
 * anomaly class. First a control: the same nodes, not broken, must check clean. One
 * cluster serves every mode in turn, each with keys of its own.
 */
@ExtendWith(FaultFolders.KeepOnFailure.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
// Two minutes or more of a shared two-core machine: in the longer suite (-Pfaults-long,
// docs/reliability.md) so that ./mvnw verify stays near 20 minutes.
@EnabledIfSystemProperty(named = "quorumkv.faults.long", matches = "true")
class BrokenBuildIT {

	/**
	 * Null until made: a skipped or failed start must delete nothing (never the working
	 * folder).
	 */
	private static @Nullable Path root;

	private static Path modeFile = Path.of("");

	private static NemesisNodes nodes;

	private static long seed;

	private static Random random;

	@BeforeAll
	static void startBrokenBuild() throws IOException {
		root = FaultFolders.create("nemesis-broken");
		modeFile = root.resolve("broken-mode");
		Files.writeString(modeFile, "none");
		Path jar = BrokenBuildJar.write(root.resolve("broken-build.jar"));
		seed = NemesisRun.seed();
		random = new Random(seed);
		System.out.println("BrokenBuildIT: seed " + seed + ", broken build " + jar);
		nodes = new NemesisNodes(root, new NemesisNodes.Options(3,
				Map.of("quorumkv.test.broken-mode-file", modeFile.toString()), List.of("-Xmx160m"), jar, true, false),
				random);
		nodes.startAll();
		assertThat(nodes.logText(0)).contains("BROKEN BUILD");
	}

	@AfterAll
	static void stop() {
		if (nodes != null) {
			nodes.close();
		}
		if (root != null) {
			FaultFolders.deleteUnlessFailed(root);
		}
	}

	@Test
	@Order(0)
	void theSameNodesNotBrokenCheckClean() throws IOException {
		CheckReport report = run("none");
		assertThat(report.acknowledgedWrites()).as(report.summary()).isGreaterThan(50);
		assertThat(report.reads()).as(report.summary()).containsKeys("304", "scan page", "scan key", "ttl put");
		assertThat(report.clean()).as(report.summary()).isTrue();
	}

	@Test
	@Order(1)
	void aReplicaAcknowledgingBeforeWritingMakesStaleQuorumReads() throws IOException {
		CheckReport report = run("ack-before-write");
		assertThat(report.stale()).as(report.summary()).isPositive();
	}

	@Test
	@Order(2)
	void aReplicaAcknowledgingWritesItDropsLosesThem() throws IOException {
		CheckReport report = run("ack-without-write");
		assertThat(report.lostTotal()).as(report.summary()).isPositive();
		assertThat(report.lostWithAckAtLeast(2)).as(report.summary()).isPositive();
	}

	@Test
	@Order(3)
	void lastWriteWinsReversedResurrectsDeletesAndLosesWrites() throws IOException {
		CheckReport report = run("reversed-lww");
		assertThat(report.resurrected()).as(report.summary()).isPositive();
		assertThat(report.lostTotal()).as(report.summary()).isPositive();
	}

	@Test
	@Order(4)
	void corruptedReadsAreValuesNeverWritten() throws IOException {
		CheckReport report = run("corrupt-reads");
		assertThat(report.neverWritten()).as(report.summary()).isPositive();
	}

	/**
	 * Two writers to each of two keys, half the operations PUTs and a fifth scan pages;
	 * writes of even timestamps applied 700 ms late, so that of two concurrent writes the
	 * older often arrives last, and a GET answers the write that arrived last while a
	 * scan answers the greatest (its version is learnt from the scans). Stale reads older
	 * by version only: their state's write was not acknowledged before the write they
	 * miss began, so only the versions order them.
	 */
	@Test
	@Order(5)
	void lastArrivalWinsMakesReadsOlderByVersionThanWritesTheyMustSee() throws IOException {
		Clients.Mix mix = new Clients.Mix(50, 0, new int[] { 1, 2, 2, 3 }, 3, false, 2, 2, 0, 0, 20,
				Checker.Timing.SLACK_MICROS / 1_000);
		CheckReport report = run("last-arrival-wins", mix, 1);
		assertThat(report.stale()).as(report.summary()).isPositive();
		assertThat(report.staleByVersionOnly()).as(report.summary()).isPositive();
	}

	/** Few writes, all with a ttl of 1 or 2 s, many reads. */
	@Test
	@Order(6)
	void valuesStoredWithoutTheirExpiryAreReadPastIt() throws IOException {
		Clients.Mix mix = new Clients.Mix(10, 0, new int[] { 1, 2, 2, 3 }, 3, false, 2, 2, 100, 0, 10,
				Checker.Timing.SLACK_MICROS / 1_000);
		CheckReport report = run("ignore-ttl", mix, 20);
		assertThat(report.expired()).as(report.summary()).isPositive();
	}

	@Test
	@Order(7)
	void scansThatSkipRecentWritesAreStale() throws IOException {
		Clients.Mix mix = new Clients.Mix(45, 10, new int[] { 1, 2, 2, 3 }, 3, false, 2, 2, 0, 0, 30,
				Checker.Timing.SLACK_MICROS / 1_000);
		CheckReport report = run("scan-skips-recent", mix, 10);
		assertThat(report.staleBy("scan")).as(report.summary()).isPositive();
		assertThat(report.staleBy("get")).as(report.summary()).isZero();
	}

	@Test
	@Order(8)
	void aNotModifiedThatNeverLooksIsStale() throws IOException {
		Clients.Mix mix = new Clients.Mix(45, 10, new int[] { 1, 2, 2, 3 }, 3, false, 2, 2, 0, 100, 0,
				Checker.Timing.SLACK_MICROS / 1_000);
		CheckReport report = run("wrong-304", mix, 10);
		assertThat(report.staleBy("304")).as(report.summary()).isPositive();
		assertThat(report.staleBy("get")).as(report.summary()).isZero();
	}

	/**
	 * Last: a value read repaired to a replica carries the shifted version, which the
	 * nodes' clocks refuse to follow (max-clock-skew), but the keys keep it.
	 */
	@Test
	@Order(9)
	void versionsStampedLaterOnReadsArePhantoms() throws IOException {
		CheckReport report = run("phantom-versions");
		assertThat(report.phantom()).as(report.summary()).isPositive();
	}

	private static CheckReport run(String mode) throws IOException {
		return run(mode, Clients.Mix.standard(), 10);
	}

	private static CheckReport run(String mode, Clients.Mix mix, int keysPerThread) throws IOException {
		Files.writeString(modeFile, mode);
		Pause.millis(500);
		try {
			// ack-before-write applies its writes 3 s late: the final reads come after.
			NemesisRun.Scenario scenario = new NemesisRun.Scenario(mode, seed, nodes.options(), 6, keysPerThread, mix,
					Duration.ofSeconds(8), (r) -> FaultPlans.of(List.of()), 0, 0, 4_000);
			return NemesisRun.phase(scenario, nodes, root, random).report();
		}
		finally {
			Files.writeString(modeFile, "none");
		}
	}

}
