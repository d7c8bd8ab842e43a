package io.quorumkv.service.peer;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Sinks;

class EventLoopTimersTest {

	private static final long WAIT_SECONDS = 10;

	private final EventLoop loop = new DefaultEventLoop();

	private final EventLoopTimers timers = new EventLoopTimers(this.loop);

	@AfterEach
	void close() throws InterruptedException {
		this.loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(WAIT_SECONDS, TimeUnit.SECONDS);
	}

	/** Runs {@code action} on the loop and returns what it returned. */
	private <T> T onLoop(java.util.concurrent.Callable<T> action) throws Exception {
		return this.loop.submit(action).get(WAIT_SECONDS, TimeUnit.SECONDS);
	}

	@Test
	void aTimerArmedOnAnEventLoopRunsOnThatLoop() throws Exception {
		CompletableFuture<Thread> ranOn = new CompletableFuture<>();
		Thread loopThread = onLoop(Thread::currentThread);
		long armedAt = System.nanoTime();
		onLoop(() -> this.timers.schedule(() -> ranOn.complete(Thread.currentThread()), 50, TimeUnit.MILLISECONDS));
		assertThat(ranOn.get(WAIT_SECONDS, TimeUnit.SECONDS)).isSameAs(loopThread);
		assertThat(System.nanoTime() - armedAt).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(50));
	}

	@Test
	void aDisposedTimerNeverRunsEvenWhenDisposedFromAnotherThread() throws Exception {
		AtomicBoolean ran = new AtomicBoolean();
		Disposable timer = onLoop(() -> this.timers.schedule(() -> ran.set(true), 100, TimeUnit.MILLISECONDS));
		timer.dispose();
		assertThat(timer.isDisposed()).isTrue();
		// A later timer of the same loop has run, so the first one's time has passed too.
		CountDownLatch later = new CountDownLatch(1);
		onLoop(() -> this.timers.schedule(later::countDown, 200, TimeUnit.MILLISECONDS));
		assertThat(later.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
		assertThat(ran).isFalse();
	}

	@Test
	void offAnEventLoopTheParallelSchedulerRunsTheTimer() throws Exception {
		CompletableFuture<String> ranOn = new CompletableFuture<>();
		this.timers.schedule(() -> ranOn.complete(Thread.currentThread().getName()), 10, TimeUnit.MILLISECONDS);
		assertThat(ranOn.get(WAIT_SECONDS, TimeUnit.SECONDS)).startsWith("parallel-");
	}

	@Test
	void aLoopThatShutDownHandsItsTimersToTheParallelScheduler() throws Exception {
		CompletableFuture<String> ranOn = new CompletableFuture<>();
		CountDownLatch armed = new CountDownLatch(1);
		this.loop.execute(() -> {
			this.loop.shutdownGracefully(0, 5, TimeUnit.SECONDS);
			this.timers.schedule(() -> ranOn.complete(Thread.currentThread().getName()), 10, TimeUnit.MILLISECONDS);
			armed.countDown();
		});
		assertThat(armed.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
		assertThat(ranOn.get(WAIT_SECONDS, TimeUnit.SECONDS)).startsWith("parallel-");
	}

	@Test
	void monoTimeoutOnAnEventLoopFailsOnThatLoop() throws Exception {
		Thread loopThread = onLoop(Thread::currentThread);
		CompletableFuture<Thread> failedOn = new CompletableFuture<>();
		CompletableFuture<Throwable> failure = new CompletableFuture<>();
		Sinks.One<String> never = Sinks.one();
		this.loop.execute(() -> never.asMono().timeout(Duration.ofMillis(50), this.timers).subscribe(null, (error) -> {
			failedOn.complete(Thread.currentThread());
			failure.complete(error);
		}));
		assertThat(failure.get(WAIT_SECONDS, TimeUnit.SECONDS)).isInstanceOf(TimeoutException.class);
		assertThat(failedOn.get()).isSameAs(loopThread);
		assertThat(never.currentSubscriberCount()).isZero();
	}

	@Test
	void immediateTasksAndWorkersAreTheParallelSchedulers() throws Exception {
		CompletableFuture<String> task = new CompletableFuture<>();
		CompletableFuture<String> workerTask = new CompletableFuture<>();
		onLoop(() -> this.timers.schedule(() -> task.complete(Thread.currentThread().getName())));
		var worker = this.timers.createWorker();
		try {
			worker.schedule(() -> workerTask.complete(Thread.currentThread().getName()));
			assertThat(task.get(WAIT_SECONDS, TimeUnit.SECONDS)).startsWith("parallel-");
			assertThat(workerTask.get(WAIT_SECONDS, TimeUnit.SECONDS)).startsWith("parallel-");
		}
		finally {
			worker.dispose();
		}
	}

}
