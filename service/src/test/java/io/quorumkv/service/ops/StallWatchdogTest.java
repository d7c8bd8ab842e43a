package io.quorumkv.service.ops;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.DefaultEventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static io.quorumkv.service.support.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

class StallWatchdogTest {

	private final DefaultEventLoopGroup group = new DefaultEventLoopGroup(2);

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final List<String> reports = new CopyOnWriteArrayList<>();

	@AfterEach
	void stop() throws InterruptedException {
		this.group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
	}

	@Test
	void aBlockedLoopIsReportedOnceWithTheStackItIsBlockedInAndAgainWhenItRuns() throws Exception {
		EventExecutor[] loops = loops();
		try (StallWatchdog watchdog = new StallWatchdog(loops, properties(), this.meters, this.reports::add,
				(nanos) -> TimeUnit.NANOSECONDS.sleep(nanos))) {
			watchdog.start();
			Thread.sleep(200);
			assertThat(this.reports).isEmpty();
			CountDownLatch release = new CountDownLatch(1);
			loops[1].execute(() -> blockTheLoopUntil(release));
			eventually(Duration.ofSeconds(5), () -> assertThat(this.reports).hasSize(1));
			Thread.sleep(300);
			assertThat(this.reports).as("one report per stall").hasSize(1);
			String report = this.reports.get(0);
			assertThat(report).startsWith("Event loop ")
				.contains("has run no task for")
				.contains("blockTheLoopUntil")
				.contains("CountDownLatch.await");
			assertThat(this.meters.get("quorumkv.watchdog.stalls").tag("kind", "event-loop").timer().count())
				.isEqualTo(1);
			release.countDown();
			eventually(Duration.ofSeconds(5), () -> assertThat(this.reports).hasSize(2));
			assertThat(this.reports.get(1)).endsWith("runs tasks again");
		}
	}

	@Test
	void aWatchdogThatSleptFarLongerThanItAskedReportsTheWholeJvmNotALoop() throws Exception {
		AtomicBoolean once = new AtomicBoolean();
		try (StallWatchdog watchdog = new StallWatchdog(loops(), properties(), this.meters, this.reports::add,
				(nanos) -> TimeUnit.NANOSECONDS
					.sleep(once.compareAndSet(false, true) ? nanos + 700_000_000L : nanos))) {
			watchdog.start();
			eventually(Duration.ofSeconds(5), () -> assertThat(this.reports).hasSize(1));
			Thread.sleep(300);
			assertThat(this.reports).hasSize(1);
			assertThat(this.reports.get(0)).startsWith("The JVM stood still for about");
			assertThat(this.meters.get("quorumkv.watchdog.stalls").tag("kind", "jvm").timer().count()).isEqualTo(1);
			assertThat(this.meters.get("quorumkv.watchdog.stalls").tag("kind", "event-loop").timer().count()).isZero();
		}
	}

	@Test
	void aLoopThatShutsDownIsNotReportedAsStalled() throws Exception {
		try (StallWatchdog watchdog = new StallWatchdog(loops(), properties(), this.meters, this.reports::add,
				(nanos) -> TimeUnit.NANOSECONDS.sleep(nanos))) {
			watchdog.start();
			Thread.sleep(200);
			// Shutting down with a quiet period: the loops cancel their timer tasks and
			// wait.
			this.group.shutdownGracefully(2, 5, TimeUnit.SECONDS);
			Thread.sleep(1200);
			assertThat(this.reports).isEmpty();
		}
	}

	@Test
	void aStallOfZeroTurnsItOff() throws Exception {
		EventExecutor[] loops = loops();
		try (StallWatchdog watchdog = new StallWatchdog(loops,
				new WatchdogProperties(Duration.ZERO, Duration.ofMillis(50)), this.meters, this.reports::add,
				(nanos) -> TimeUnit.NANOSECONDS.sleep(nanos))) {
			watchdog.start();
			CountDownLatch release = new CountDownLatch(1);
			loops[0].execute(() -> blockTheLoopUntil(release));
			Thread.sleep(800);
			release.countDown();
			assertThat(this.reports).isEmpty();
			assertThat(Thread.getAllStackTraces().keySet()).noneMatch((t) -> t.getName().equals("quorumkv-watchdog"));
		}
	}

	private EventExecutor[] loops() {
		return new EventExecutor[] { this.group.next(), this.group.next() };
	}

	private static WatchdogProperties properties() {
		return new WatchdogProperties(Duration.ofMillis(400), Duration.ofMillis(50));
	}

	private static void blockTheLoopUntil(CountDownLatch release) {
		try {
			release.await(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
