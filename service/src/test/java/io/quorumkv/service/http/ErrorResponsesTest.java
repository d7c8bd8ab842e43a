package io.quorumkv.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

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

}
