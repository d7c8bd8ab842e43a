package io.quorumkv.service.nemesis;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.Set;

import io.quorumkv.service.support.FaultFolders;
import io.quorumkv.service.support.KvClient;
import io.quorumkv.service.support.NodeProcesses;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The short nemesis scenarios of {@code ./mvnw verify}: three real nodes (one cluster for
 * both scenarios, each with keys of its own), eight client threads writing, deleting and
 * reading with {@code ack} 1, 2 or 3 of 3 through every node, while faults come one after
 * another. What is promised (docs/reliability.md): under kills, pauses and partitions of
 * every shape, nothing acknowledged is lost, no acknowledged delete is undone, no read
 * misses a write it must see, and nothing is read that was not written; under a full disk
 * and a restart from an older copy of a data folder, the same for writes acknowledged by
 * at least two replicas, but quorum reads may be stale until the restored replica is
 * repaired.
 */
@ExtendWith(FaultFolders.KeepOnFailure.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class NemesisIT {

	/**
	 * Null until made: a skipped or failed start must delete nothing (never the working
	 * folder).
	 */
	private static @Nullable Path root;

	private static NemesisNodes nodes;

	private static long seed;

	private static Random random = new Random();

	@BeforeAll
	static void startNodes() {
		root = FaultFolders.create("nemesis");
		seed = NemesisRun.seed();
		random = new Random(seed);
		System.out
			.println("NemesisIT: seed " + seed + " (rerun with -Dquorumkv.nemesis.seed=" + seed + "), folder " + root);
		// Small memtables and levels: kills land during flushes and compactions.
		nodes = new NemesisNodes(root,
				new NemesisNodes.Options(3, NodeProcesses.SMALL_LSM, List.of("-Xmx160m"), null, true, true), random);
		nodes.startAll();
		NemesisRun.warmUp(nodes);
	}

	@AfterAll
	static void stopNodes() {
		if (nodes != null) {
			nodes.close();
		}
		if (root != null) {
			FaultFolders.deleteUnlessFailed(root);
		}
	}

	@Test
	@Order(1)
	void killsPausesAndPartitionsLoseNothingAndNoQuorumReadIsStale() {
		List<Fault> faults = List.of(new Fault.Partition(List.of(Set.of(2), Set.of(0, 1))), new Fault.Pause(0, 4_000),
				new Fault.Kill(1), new Fault.Bridge(0, 2, 1), new Fault.OneWay(2, 0), new Fault.Pause(2, 1_500));
		NemesisRun.Outcome outcome = run("faults", faults);
		CheckReport report = outcome.report();
		assertThat(outcome.nemesisFailure()).isNull();
		assertThat(outcome.faults()).isEqualTo(faults.size());
		assertThat(report.acknowledgedWrites()).as(report.summary()).isGreaterThan(200);
		assertThat(report.okReads()).isGreaterThan(100);
		assertThat(report.clean()).as(report.summary()).isTrue();
		assertThat(flushes()).as("memtables flushed in the cluster").isGreaterThanOrEqualTo(6);
	}

	/** Memtables the nodes flushed since each started, summed (printed per node). */
	private static double flushes() {
		KvClient client = new KvClient(Duration.ofSeconds(5));
		double sum = 0;
		StringBuilder perNode = new StringBuilder();
		for (int node = 0; node < 3; node++) {
			KvClient.Answer answer = client.getPath(nodes.url(node), "/actuator/metrics/quorumkv.storage.flush.count");
			java.util.regex.Matcher value = java.util.regex.Pattern.compile("\"value\":([0-9.E+-]+)")
				.matcher(answer.body());
			double flushes = value.find() ? Double.parseDouble(value.group(1)) : 0;
			perNode.append(" ").append(flushes);
			sum += flushes;
		}
		System.out.println("NemesisIT: memtables flushed since each node started:" + perNode);
		return sum;
	}

	/** Node 1's older copy is the one its kill above left. */
	@Test
	@Order(2)
	void aFullDiskAndARestartFromAnOlderCopyLoseNoWriteTwoReplicasAcknowledged() {
		List<Fault> faults = List.of(new Fault.DiskFull(2), new Fault.OldCopy(1));
		NemesisRun.Outcome outcome = run("disks", faults);
		CheckReport report = outcome.report();
		assertThat(outcome.nemesisFailure()).isNull();
		assertThat(outcome.faults()).isEqualTo(faults.size());
		assertThat(report.acknowledgedWrites()).as(report.summary()).isGreaterThan(200);
		assertThat(report.lostWithAckAtLeast(2)).as(report.summary()).isZero();
		assertThat(report.resurrected()).as(report.summary()).isZero();
		assertThat(report.neverWritten()).as(report.summary()).isZero();
		assertThat(report.unreadable()).as(report.summary()).isZero();
		assertThat(report.answers()).as(report.summary()).containsKey("disk-full");
		assertThat(report.answers().get("disk-full").serverErrors()).as(report.summary()).isPositive();
	}

	private static NemesisRun.Outcome run(String name, List<Fault> faults) {
		return NemesisRun.phase(
				new NemesisRun.Scenario(name, seed, nodes.options(), 8, 24, Clients.Mix.standard(),
						Duration.ofSeconds(150), (r) -> FaultPlans.of(faults), 4_000, 2_000, 5_000),
				nodes, root, random);
	}

}
