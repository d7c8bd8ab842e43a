package io.quorumkv.service.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.quorumkv.service.replication.Replicas;
import org.junit.jupiter.api.Test;

class ReplicasParameterTest {

	@Test
	void bothSpellingsAndTheDefaultQuorum() {
		assertThat(ReplicasParameter.parse("2/3", null, null, 3)).isEqualTo(new Replicas(2, 3));
		assertThat(ReplicasParameter.parse(null, "1", "2", 3)).isEqualTo(new Replicas(1, 2));
		assertThat(ReplicasParameter.parse(null, null, "3", 3)).as("ack defaults to a majority of from")
			.isEqualTo(new Replicas(2, 3));
		assertThat(ReplicasParameter.parse(null, "1", null, 5)).as("from defaults to the replication factor")
			.isEqualTo(new Replicas(1, 5));
		assertThat(ReplicasParameter.parse(null, null, null, 5)).isEqualTo(Replicas.quorum(5));
		assertThat(ReplicasParameter.parse("000000001/000000003", null, null, 3)).isEqualTo(new Replicas(1, 3));
	}

	@Test
	void numbersAreOneToNineAsciiDigits() {
		for (String bad : new String[] { "/3", "2/", "+2/3", "2 /3", "2/3x", "½/3", "1234567890/3", "-1/3", "2/3/3",
				"0x1/3" }) {
			assertThatThrownBy(() -> ReplicasParameter.parse(bad, null, null, 3)).as(bad)
				.isInstanceOf(ApiException.class)
				.hasMessageContaining("must be a small non-negative integer");
		}
		assertThatThrownBy(() -> ReplicasParameter.parse(null, "1\u0000", null, 3)).isInstanceOf(ApiException.class)
			.hasMessageContaining("ack must be a small non-negative integer, got '1?'");
		assertThatThrownBy(() -> ReplicasParameter.parse("23", null, null, 3)).isInstanceOf(ApiException.class)
			.hasMessageContaining("replicas must be ACK/FROM");
	}

	@Test
	void rangesAreChecked() {
		assertThatThrownBy(() -> ReplicasParameter.parse("0/3", null, null, 3)).hasMessageContaining("at least 1");
		assertThatThrownBy(() -> ReplicasParameter.parse("3/2", null, null, 3))
			.hasMessageContaining("ack (3) must not exceed from (2)");
		assertThatThrownBy(() -> ReplicasParameter.parse("999999999/999999999", null, null, 3))
			.hasMessageContaining("from (999999999) exceeds the replication factor (3)");
		assertThatThrownBy(() -> ReplicasParameter.parse("1/1", "1", null, 3)).hasMessageContaining("not both");
	}

}
