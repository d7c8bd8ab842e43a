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
 * {@code quorumkv.jar} with {@link BrokenBuildJar} on its class path, the storage
 * misbehaving as a file says) and the checker must catch each anomaly class. First a
 * control: the same nodes, not broken, must check clean. One cluster serves every mode in
 * turn, each with keys of its own.
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

	private static CheckReport run(String mode) throws IOException {
		Files.writeString(modeFile, mode);
		Pause.millis(500);
		try {
			// ack-before-write applies its writes 3 s late: the final reads come after.
			NemesisRun.Scenario scenario = new NemesisRun.Scenario(mode, seed, nodes.options(), 6, 10,
					Clients.Mix.standard(), Duration.ofSeconds(8), (r) -> FaultPlans.of(List.of()), 0, 0, 4_000);
			return NemesisRun.phase(scenario, nodes, root, random).report();
		}
		finally {
			Files.writeString(modeFile, "none");
		}
	}

}
