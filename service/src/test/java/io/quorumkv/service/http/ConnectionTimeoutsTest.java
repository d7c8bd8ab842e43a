package io.quorumkv.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;

import io.quorumkv.service.QuorumKvApplication;
import io.quorumkv.service.support.RawConnection;
import io.quorumkv.service.support.RawConnection.Answer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@code quorumkv.http.read-timeout} and {@code quorumkv.http.idle-timeout} on a real
 * node: Reactor Netty's own read and idle timeouts, set from them (1 s and 2 s here).
 */
@SpringBootTest(classes = QuorumKvApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "quorumkv.http.read-timeout=1s", "quorumkv.http.idle-timeout=2s" })
@DirtiesContext
class ConnectionTimeoutsTest {

	private static final String HEAD = "PUT /v0/entity?id=slow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\n";

	@TempDir
	static Path data;

	@DynamicPropertySource
	static void storage(DynamicPropertyRegistry registry) {
		registry.add("quorumkv.storage.path", () -> data.resolve("node").toString());
	}

	@LocalServerPort
	int port;

	@Test
	void aBodyThatStopsArrivingIsAnswered408AndItsConnectionClosed() throws IOException {
		try (RawConnection connection = RawConnection.open(this.port)) {
			connection.send(HEAD + "abc");
			long start = System.nanoTime();
			Answer answer = connection.read(Duration.ofSeconds(10));
			assertThat(answer).isNotNull();
			assertThat(answer.status()).isEqualTo(408);
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
			assertThat(connection.read(Duration.ofSeconds(5))).isNull();
			assertThat(connection.closedByServer()).isTrue();
		}
	}

	@Test
	void aBodyArrivingSlowlyButSteadilyIsNotCut() throws IOException, InterruptedException {
		try (RawConnection connection = RawConnection.open(this.port)) {
			connection.send(HEAD);
			for (int i = 0; i < 5; i++) {
				Thread.sleep(600);
				connection.send("ab");
			}
			Answer answer = connection.read(Duration.ofSeconds(10));
			assertThat(answer).isNotNull();
			assertThat(answer.status()).isEqualTo(201);
		}
	}

	@Test
	void aConnectionWaitingForItsNextRequestIsClosedAfterTheIdleTimeout() throws IOException {
		try (RawConnection connection = RawConnection.open(this.port)) {
			connection.send("GET /v0/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
			Answer answer = connection.read(Duration.ofSeconds(10));
			assertThat(answer).isNotNull();
			assertThat(answer.status()).isEqualTo(200);
			long start = System.nanoTime();
			assertThat(connection.read(Duration.ofSeconds(10))).isNull();
			assertThat(connection.closedByServer()).isTrue();
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(Duration.ofMillis(1500),
					Duration.ofSeconds(6));
		}
	}

}
