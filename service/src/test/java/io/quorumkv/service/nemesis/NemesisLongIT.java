package io.quorumkv.service.nemesis;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;

import io.quorumkv.service.support.FaultFolders;
import io.quorumkv.service.support.NodeProcesses;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The long nemesis run ({@code ./mvnw verify -Pnemesis-long}, skipped otherwise): three
 * nodes, eight client threads, and a fault every ~10 s for
 * {@code quorumkv.nemesis.minutes} (30), drawn from a seeded random among
 * {@code quorumkv.nemesis.kinds} (by default every kind whose promise is "nothing lost,
 * nothing stale": kills, pauses of 1-15 s, majority/minority partitions, bridges, one-way
 * cuts and full disks). With clock faults or restarts from older copies among the kinds,
 * only their weaker promises are asserted (docs/reliability.md); every anomaly is
 * reported either way. A second test runs the membership changes and repairs of
 * {@link NemesisIT} in rounds under the same cycling faults.
 */
@ExtendWith(FaultFolders.KeepOnFailure.class)
class NemesisLongIT {

	private static final List<FaultPlans.Kind> PROMISED_CLEAN = List.of(FaultPlans.Kind.KILL, FaultPlans.Kind.PAUSE,
			FaultPlans.Kind.PARTITION, FaultPlans.Kind.BRIDGE, FaultPlans.Kind.ONE_WAY, FaultPlans.Kind.DISK_FULL);

	/**
	 * The folders made (none until made: a skipped or failed start must delete nothing,
	 * never the working folder).
	 */
	private static final List<Path> roots = new CopyOnWriteArrayList<>();

	@AfterAll
	static void deleteFolders() {
		roots.forEach(FaultFolders::deleteUnlessFailed);
	}

	@Test
	void faultsEveryTenSecondsForHalfAnHour() {
		Assumptions.assumeTrue(Boolean.getBoolean("quorumkv.nemesis.long"), "only with -Pnemesis-long");
		long minutes = Long.getLong("quorumkv.nemesis.minutes", 30);
		List<FaultPlans.Kind> kinds = kinds();
		Path root = FaultFolders.create("nemesis-long");
		roots.add(root);
		NemesisNodes.Options nodes = new NemesisNodes.Options(3, NodeProcesses.SMALL_LSM, List.of("-Xmx192m"), null,
				true, true);
		long started = System.nanoTime();
		NemesisRun.Outcome outcome = NemesisRun
			.execute(new NemesisRun.Scenario("long", NemesisRun.seed(), nodes, 8, 64, Clients.Mix.standard(),
					Duration.ofMinutes(minutes), (random) -> FaultPlans.random(random, 3, kinds), 8_000, 2_000, 5_000),
					root);
		CheckReport report = outcome.report();
		System.out.println("NemesisLongIT: " + (System.nanoTime() - started) / 60_000_000_000L + " min, kinds " + kinds
				+ ", faults " + outcome.faults() + " " + outcome.injected() + ", operations " + report.operations()
				+ ", acknowledged writes " + report.acknowledgedWrites() + ", ok reads " + report.okReads() + ", lost "
				+ report.lostTotal() + ", resurrected " + report.resurrected() + ", stale " + report.stale()
				+ ", never written " + report.neverWritten() + ", unreadable " + report.unreadable());
		assertThat(outcome.nemesisFailure()).isNull();
		assertThat(report.neverWritten()).as(report.summary()).isZero();
		assertThat(RingData.otherServerErrors(report)).as("5xx other than 503 and 504: %s", report.summary()).isZero();
		assertThat(report.unreadable()).as(report.summary()).isZero();
		if (!kinds.contains(FaultPlans.Kind.CLOCK)) {
			assertThat(report.lostWithAckAtLeast(2)).as(report.summary()).isZero();
			assertThat(report.resurrected()).as(report.summary()).isZero();
			if (PROMISED_CLEAN.containsAll(kinds)) {
				assertThat(report.clean()).as(report.summary()).isTrue();
			}
		}
	}

	/**
	 * The membership scenario of {@link NemesisIT} with cycling faults: three seeds and a
	 * spare; in rounds, the spare joins, a member is decommissioned (and comes back wiped
	 * as the next spare), a member repairs, with two faults drawn among the kinds after
	 * each change and one in the middle of each repair, for
	 * {@code quorumkv.nemesis.minutes} (30). The ring must settle within two minutes
	 * after each change is healed, and at the end every key is on exactly RF agreeing
	 * replicas.
	 */
	@Test
	void membershipChangesAndRepairsUnderCyclingFaults() {
		Assumptions.assumeTrue(Boolean.getBoolean("quorumkv.nemesis.long"), "only with -Pnemesis-long");
		long minutes = Long.getLong("quorumkv.nemesis.minutes", 30);
		List<FaultPlans.Kind> kinds = kinds();
		Path folder = FaultFolders.create("nemesis-long-ring");
		roots.add(folder);
		long seed = NemesisRun.seed();
		Map<String, String> properties = new LinkedHashMap<>(NodeProcesses.SMALL_LSM);
		properties.putAll(NemesisIT.MEMBERSHIP);
		System.out.println("NemesisLongIT ring: seed " + seed + " (rerun with -Dquorumkv.nemesis.seed=" + seed
				+ "), folder " + folder);
		Random random = new Random(seed);
		long started = System.nanoTime();
		try (NemesisNodes nodes = new NemesisNodes(folder,
				new NemesisNodes.Options(4, properties, List.of("-Xmx160m"), null, true, true, 3), random)) {
			nodes.startAll();
			NemesisRun.warmUp(nodes);
			Operator operator = new Operator(nodes);
			Map<String, String> bulk = RingData.preload(nodes, "bulk" + Long.toHexString(seed & 0xffff), 600, 1_024);
			NemesisRun.Scenario scenario = new NemesisRun.Scenario("ring-long", seed, nodes.options(), 8, 64,
					Clients.Mix.standard(), Duration.ofMinutes(minutes),
					(r) -> FaultPlans.membership(r, nodes, operator, kinds, 2, 120_000), 8_000, 2_000, 5_000);
			NemesisRun.Outcome outcome = NemesisRun.phase(scenario, nodes, folder, random,
					() -> operator.settle(Duration.ofSeconds(120)));
			CheckReport report = outcome.report();
			long epoch = operator.settle(Duration.ofSeconds(120));
			System.out.println("NemesisLongIT ring: " + (System.nanoTime() - started) / 60_000_000_000L + " min, kinds "
					+ kinds + ", steps " + outcome.injected() + ", operations " + report.operations()
					+ ", acknowledged writes " + report.acknowledgedWrites() + ", ok reads " + report.okReads()
					+ ", lost " + report.lostTotal() + ", resurrected " + report.resurrected() + ", stale "
					+ report.stale() + ", never written " + report.neverWritten() + ", unreadable "
					+ report.unreadable() + ", 5xx but 503/504 " + RingData.otherServerErrors(report)
					+ "; the ring settled at epoch " + epoch + "\n  " + String.join("\n  ", operator.log()));
			assertThat(outcome.nemesisFailure()).as("%s", operator.log()).isNull();
			assertThat(report.neverWritten()).as(report.summary()).isZero();
			assertThat(report.unreadable()).as(report.summary()).isZero();
			assertThat(RingData.otherServerErrors(report)).as(report.summary()).isZero();
			if (!kinds.contains(FaultPlans.Kind.CLOCK)) {
				assertThat(report.lostWithAckAtLeast(2)).as(report.summary()).isZero();
				assertThat(report.resurrected()).as(report.summary()).isZero();
				if (PROMISED_CLEAN.containsAll(kinds)) {
					assertThat(report.clean()).as(report.summary()).isTrue();
				}
			}
			List<String> keys = new ArrayList<>(NemesisRun.keys(scenario));
			keys.addAll(bulk.keySet());
			RingData.everyKeyOnRfAgreeingReplicas(nodes, keys, bulk, 3);
		}
	}

	private static List<FaultPlans.Kind> kinds() {
		String given = System.getProperty("quorumkv.nemesis.kinds", "");
		if (given.isBlank()) {
			return PROMISED_CLEAN;
		}
		List<FaultPlans.Kind> kinds = new ArrayList<>();
		for (String kind : given.split(",")) {
			kinds.add(FaultPlans.Kind.valueOf(kind.strip().toUpperCase().replace('-', '_')));
		}
		return kinds;
	}

}
