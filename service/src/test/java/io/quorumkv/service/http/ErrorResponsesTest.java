package io.quorumkv.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.replication.QuorumNotReachedException;
import io.quorumkv.service.replication.ReplicaUnavailableException;
import io.quorumkv.service.replication.Replicas;
import io.quorumkv.storage.StorageException;
import org.junit.jupiter.api.Test;

/** What a failure of a public request is answered. */
class ErrorResponsesTest {

	@Test
	void aStorageFailureIsA503AndOnlyAnUnexpectedFailureA500() {
		IOException full = new IOException("No space left on device\n");
		Reply storage = ErrorResponses.toReply(new StorageException(
				"cannot write the clock's high-water mark to /data/clock: No space left on device", full));
		assertThat(storage.status().value()).isEqualTo(503);
		assertThat(new String(storage.body(), StandardCharsets.UTF_8)).isEqualTo(
				"storage failure: cannot write the clock's high-water mark to /data/clock: No space left on device\n");
		Reply unexpected = ErrorResponses.toReply(new UncheckedIOException("cannot write", full));
		assertThat(unexpected.status().value()).isEqualTo(500);
	}

	/**
	 * A 504 or 503 for want of replicas tells the client how many answered, not which
	 * peers failed, at which address, with which Java exception (that is for the log and
	 * the admin views).
	 */
	@Test
	void a504OrA503ForWantOfReplicasShowsNoClassNameNorPeerAddress() {
		Reply timeout = ErrorResponses.toReply(new QuorumNotReachedException("write", new Replicas(2, 3), 1,
				"http://10.0.0.2:8080: ReplicaUnavailableException: java.net.ConnectException: Connection refused"));
		assertThat(timeout.status().value()).isEqualTo(504);
		assertThat(new String(timeout.body(), StandardCharsets.UTF_8))
			.isEqualTo("write reached 1 of the 2 replicas needed (2/3)\n");
		Reply unavailable = ErrorResponses.toReply(new ReplicaUnavailableException(Node.of("http://10.0.0.2:8080"),
				new java.net.ConnectException("Connection refused: /10.0.0.2:8080")));
		assertThat(unavailable.status().value()).isEqualTo(503);
		assertThat(new String(unavailable.body(), StandardCharsets.UTF_8)).doesNotContain("10.0.0.2")
			.doesNotContain("Exception")
			.contains("replica");
	}

}
