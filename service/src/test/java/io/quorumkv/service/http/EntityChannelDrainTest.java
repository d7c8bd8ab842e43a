package io.quorumkv.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.boot.web.server.context.WebServerGracefulShutdownLifecycle;

/** The shutdown waits for the requests under way, and no longer than its timeout. */
@Timeout(30)
class EntityChannelDrainTest {

	private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();

	@AfterEach
	void stopTimer() {
		this.timer.shutdownNow();
	}

	@Test
	void stopReturnsOnceNoRequestIsUnderWay() {
		AtomicInteger inFlight = new AtomicInteger(2);
		this.timer.schedule(inFlight::decrementAndGet, 100, TimeUnit.MILLISECONDS);
		this.timer.schedule(inFlight::decrementAndGet, 200, TimeUnit.MILLISECONDS);
		EntityChannelDrain drain = new EntityChannelDrain(inFlight::get, Duration.ofSeconds(20));
		drain.start();
		long start = System.nanoTime();
		drain.stop();
		assertThat(inFlight).hasValue(0);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
		assertThat(drain.isRunning()).isFalse();
	}

	@Test
	void stopGivesUpAfterTheTimeout() {
		EntityChannelDrain drain = new EntityChannelDrain(() -> 1, Duration.ofMillis(200));
		long start = System.nanoTime();
		drain.stop();
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(200));
	}

	@Test
	void itStopsAfterTheWebServersGracefulShutdownAndBeforeTheWebServer() {
		int phase = new EntityChannelDrain(() -> 0, Duration.ZERO).getPhase();
		assertThat(phase).isLessThan(WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE)
			.isGreaterThan(WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE - 1024);
	}

}
