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
import io.quorumkv.service.support.KvClient;
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
 * cluster serves every mode in turn, each with keys of its own. Then the conditional
 * writes ({@code io.quorumkv.service.paxos.BrokenPaxos}): a coordinator that skips the
 * prepare is not linearizable; a control with slow rounds and restarts is, and the same
 * with acceptors that forget their promises on restart is not.
 */
@ExtendWith(FaultFolders.KeepOnFailure.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
// Two minutes or more of a shared two-core machine: in the longer suite (-Pfaults-long,
// docs/reliability.md) so that ./mvnw verify stays near 20 minutes.
@EnabledIfSystemProperty(named = "quorumkv.faults.long", matches = "true")
class BrokenBuildIT {

	/**
	 * The nodes' Paxos timeout: a round stood still through a node's restart (5 to 14 s
	 * on a loaded machine) is then still answered ({@link #forgottenPromises}).
	 */
	private static final Duration PAXOS_TIMEOUT = Duration.ofSeconds(15);

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
		nodes = new NemesisNodes(root,
				new NemesisNodes.Options(3,
						Map.of("quorumkv.test.broken-mode-file", modeFile.toString(), "quorumkv.paxos.timeout",
								PAXOS_TIMEOUT.toSeconds() + "s", "quorumkv.paxos.grace", "2m"),
						List.of("-Xmx160m"), jar, true, false),
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

	/**
	 * The control of the conditional writes: the clients and the faults of
	 * {@link #forgottenPromises} on the same nodes, their acceptors durable, are
	 * linearizable (with the slow rounds of {@code paxos-slow-proposals}: a slow
	 * coordinator is no bug).
	 */
	@Test
	@Order(10)
	void conditionalWritesOfTheSameNodesNotBrokenAreLinearizableUnderSlowRoundsAndRestarts() throws IOException {
		LinearizabilityResult result = forgottenPromises("paxos-slow-proposals");
		assertThat(result).isInstanceOf(LinearizabilityResult.Linearizable.class);
	}

	/**
	 * A coordinator that proposes under a ballot no majority promised, on the value a
	 * quorum read found, and never completes a proposal in progress: two conditional
	 * writes on one version both succeed. The register clients send to every node in
	 * turn; no fault.
	 */
	@Test
	@Order(11)
	void aCoordinatorSkippingThePrepareMakesConditionalWritesNonLinearizable() throws IOException {
		LinearizabilityResult result = conditional("paxos-skip-prepare", List.of(), List.of(), Duration.ofSeconds(20));
		assertThat(result).isInstanceOf(LinearizabilityResult.Violation.class);
	}

	/**
	 * Last (its nodes keep their acceptor tables in memory until they stop): every node
	 * restarted in the mode, then the control's clients and faults.
	 */
	@Test
	@Order(12)
	void acceptorsForgettingTheirPromisesOnRestartMakeConditionalWritesNonLinearizable() throws IOException {
		Files.writeString(modeFile, "paxos-forget-promise");
		for (int node = 0; node < nodes.size(); node++) {
			nodes.kill(node);
			nodes.start(node);
			awaitCoordinating(node);
			assertThat(nodes.logText(node)).contains("acceptor table is in memory only");
		}
		LinearizabilityResult result = forgottenPromises("paxos-forget-promise");
		assertThat(result).isInstanceOf(LinearizabilityResult.Violation.class);
	}

	/**
	 * What shows an acceptor that forgets its promises: a round whose promises came
	 * before a restart and whose proposal after it (a forgotten accepted value does no
	 * harm: the entry chosen is stored at a majority before it is acknowledged, and a
	 * promise reports what the node's storage holds). Rounds take milliseconds and a
	 * restart 5 to 14 s, so the mode's rounds are slow one time in four (their proposal
	 * 20 s after their promises, {@code BrokenPaxos}), and the nodes' Paxos timeout is 15
	 * s so that they are still answered. Every register client sends to one node
	 * {@code p}; 8 s in, the two others are killed and started again. A slow round of
	 * {@code p} promised before the kill proposes after the restart: {@code p}'s acceptor
	 * refuses it if a faster round on its key chose a value meanwhile, but the two
	 * restarted acceptors, which forgot the higher ballot they promised, accept it, and a
	 * write decided on a value replaced meanwhile is applied. Which node, the seed draws.
	 */
	private static LinearizabilityResult forgottenPromises(String mode) throws IOException {
		int coordinator = new Random(seed).nextInt(nodes.size());
		int first = (coordinator + 1) % nodes.size();
		int second = (coordinator + 2) % nodes.size();
		List<Fault> faults = List
			.of(new Fault.Delayed(8_000, new Fault.Together(List.of(new Fault.Kill(first), new Fault.Kill(second)))));
		return conditional(mode, faults, List.of(coordinator), Duration.ofSeconds(60));
	}

	/**
	 * Waits until {@code node} coordinates a serial read (a restarted node answers 503
	 * until the metadata group confirmed its ring), at most 2 minutes.
	 */
	private static void awaitCoordinating(int node) {
		KvClient client = new KvClient(Duration.ofSeconds(5));
		long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
		int status;
		do {
			status = client.getPath(nodes.url(node), "/v0/entity?id=coordinating&consistency=serial").status();
			if (status == 200 || status == 404) {
				return;
			}
			Pause.millis(200);
		}
		while (System.nanoTime() < deadline);
		throw new AssertionError("node " + node + " still answers " + status + " to a serial read after 2 minutes");
	}

	/**
	 * Sixteen register clients ({@link ConditionalMix}) on keys of this mode, sending to
	 * {@code homes} (empty: to every node in turn), beside two plain client threads, for
	 * {@code duration} at most or until the faults are done; the checker's verdict.
	 */
	private static LinearizabilityResult conditional(String mode, List<Fault> faults, List<Integer> homes,
			Duration duration) throws IOException {
		Files.writeString(modeFile, mode);
		Pause.millis(500);
		try (ConditionalMix mix = new ConditionalMix(nodes, "cas-" + mode, seed, 16, 0, 0, homes,
				PAXOS_TIMEOUT.multipliedBy(2).plusSeconds(5))) {
			NemesisRun.Scenario scenario = new NemesisRun.Scenario("cas-" + mode, seed, nodes.options(), 2, 4,
					Clients.Mix.standard(), duration, (r) -> FaultPlans.of(faults), 200, 1_500, 4_000);
			NemesisRun.phase(scenario, nodes, root, random, mix::stop);
			return mix.check();
		}
		finally {
			Files.writeString(modeFile, "none");
		}
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
