package io.quorumkv.service.metadata;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import java.io.IOException;
import java.time.Duration;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.ratis.proto.RaftProtos.RequestVoteReplyProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteRequestProto;
import org.apache.ratis.protocol.exceptions.GroupMismatchException;
import org.apache.ratis.server.RaftServer;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * The receiving side of Ratis' calls: a call for a group this node does not hold (a voter
 * fenced by a forced reconfiguration standing for election in its old group) is refused
 * and counted; any other answer or failure is not counted.
 */
class RaftEndpointTest {

	private final MeterRegistry meters = new SimpleMeterRegistry();

	private final RaftEndpoint endpoint = new RaftEndpoint(Schedulers.immediate(), this.meters);

	private final RaftServer server = mock(RaftServer.class);

	@Test
	void aVoteForAnotherGroupIsRefusedAndCounted() throws Exception {
		when(this.server.requestVote(any())).thenThrow(new GroupMismatchException("no such group here"));
		this.endpoint.serve(this.server);

		StepVerifier.create(this.endpoint.handle("vote", RequestVoteRequestProto.getDefaultInstance().toByteArray()))
			.expectErrorSatisfies((error) -> assertThat(RaftEndpoint.forAnotherGroup(error)).isTrue())
			.verify(Duration.ofSeconds(5));
		assertThat(otherGroupCalls()).isEqualTo(1.0);
	}

	@Test
	void aVoteOfThisGroupAndOtherFailuresAreNotCounted() throws Exception {
		when(this.server.requestVote(any())).thenReturn(RequestVoteReplyProto.getDefaultInstance())
			.thenThrow(new IOException("disk full"));
		this.endpoint.serve(this.server);
		byte[] vote = RequestVoteRequestProto.getDefaultInstance().toByteArray();

		StepVerifier.create(this.endpoint.handle("vote", vote)).expectNextCount(1).verifyComplete();
		StepVerifier.create(this.endpoint.handle("vote", vote))
			.expectErrorSatisfies((error) -> assertThat(RaftEndpoint.forAnotherGroup(error)).isFalse())
			.verify(Duration.ofSeconds(5));
		assertThat(otherGroupCalls()).isZero();
	}

	private double otherGroupCalls() {
		return this.meters.get("quorumkv.metadata.calls.other.group").counter().count();
	}

}
