package io.quorumkv.service.repair;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quorumkv.service.cluster.Node;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.test.StepVerifier;

/**
 * Repair runs only on a settled ring: refused while a membership change is under way and
 * before the node has a ring, by the repairing node and by a peer asked for its trees.
 */
class RepairRefusalTest {

	@TempDir
	Path dir;

	private static RangeReplicas ring(long epoch, boolean changing) {
		return new RangeReplicas() {

			@Override
			public List<RepairRange> ranges() {
				return List.of();
			}

			@Override
			public List<String> owners(byte[] key) {
				return List.of();
			}

			@Override
			public RingState ring() {
				return new RingState(epoch, changing);
			}

		};
	}

	private RepairService service(RangeReplicas ranges) throws IOException {
		RepairHistory history = RepairHistory.open(this.dir.resolve("repair-history"));
		RepairContext context = new RepairContext(Node.of("http://127.0.0.1:1"), null, null, null, null, null, null);
		return new RepairService(context, ranges, null, history,
				new RepairMetrics(new SimpleMeterRegistry(), new RepairMetrics.RangeSlices() {

					@Override
					public int size() {
						return 0;
					}

					@Override
					public java.util.Optional<RepairRange> rangeOf(int index) {
						return java.util.Optional.empty();
					}

				}, history));
	}

	@Test
	void aRepairIsRefusedWhileAMembershipChangeIsUnderWay() throws IOException {
		StepVerifier.create(service(ring(4, true)).repair(RepairService.Scope.PRIMARY))
			.expectErrorSatisfies((error) -> assertThat(error).isInstanceOf(RepairService.RepairRefusedException.class)
				.hasMessageContaining("membership change is under way (ring epoch 4)"))
			.verify(Duration.ofSeconds(10));
	}

	@Test
	void aRepairIsRefusedBeforeTheNodeHasARing() throws IOException {
		StepVerifier.create(service(ring(0, false)).repair(RepairService.Scope.ALL))
			.expectErrorSatisfies((error) -> assertThat(error).isInstanceOf(RepairService.RepairRefusedException.class)
				.hasMessageContaining("no ring yet"))
			.verify(Duration.ofSeconds(10));
	}

	@Test
	void aPeerRefusesToBuildTreesWhileAMembershipChangeIsUnderWay() throws IOException {
		RepairSessions sessions = new RepairSessions(null,
				RepairSettings.of(new RepairProperties(true, Duration.ofHours(24), 0.1, 16, 4096, 32, 100_000, 256, 0,
						Duration.ofMinutes(1), Duration.ofMinutes(1), 2), 1024),
				null, null, RepairHistory.open(this.dir.resolve("repair-history")), ring(4, true), "http://127.0.0.1:2",
				new SimpleMeterRegistry());
		byte[] body = RepairCodec.trees(new RepairCodec.TreesRequest(RepairCodec.SessionId.random(), 2,
				List.of(new TokenRange(Long.MIN_VALUE, Long.MAX_VALUE))));
		StepVerifier.create(sessions.trees(body, "http://127.0.0.1:1", RepairService.Scope.ALL))
			.expectError(RepairService.RepairRefusedException.class)
			.verify(Duration.ofSeconds(10));
	}

}
