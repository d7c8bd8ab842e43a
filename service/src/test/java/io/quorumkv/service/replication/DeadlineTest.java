package io.quorumkv.service.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.scheduler.VirtualTimeScheduler;

class DeadlineTest {

	private final VirtualTimeScheduler timers = VirtualTimeScheduler.create();

	private final List<Object> signals = new CopyOnWriteArrayList<>();

	private <T> void subscribe(Mono<T> call) {
		Deadline.subscribe(call, Duration.ofSeconds(1), this.timers, (value) -> this.signals.add("value " + value),
				this.signals::add);
	}

	@Test
	void aCallThatEndsWhileSubscribedArmsNoTimer() {
		subscribe(Mono.just("v"));
		subscribe(Mono.empty());
		Exception failure = new IllegalStateException("disk");
		subscribe(Mono.error(failure));
		assertThat(this.signals).containsExactly("value v", "value null", failure);
		assertThat(this.timers.getScheduledTaskCount()).isZero();
	}

	@Test
	void aLaterAnswerCancelsTheTimer() {
		Sinks.One<String> answer = Sinks.one();
		subscribe(answer.asMono());
		assertThat(this.signals).isEmpty();
		answer.tryEmitValue("late");
		this.timers.advanceTimeBy(Duration.ofSeconds(5));
		assertThat(this.signals).containsExactly("value late");
	}

	@Test
	void noAnswerWithinTheDeadlineFailsOnceAndCancelsTheCall() {
		Sinks.One<String> answer = Sinks.one();
		subscribe(answer.asMono());
		this.timers.advanceTimeBy(Duration.ofMillis(999));
		assertThat(this.signals).isEmpty();
		this.timers.advanceTimeBy(Duration.ofMillis(1));
		assertThat(this.signals).singleElement().isInstanceOf(TimeoutException.class);
		assertThat(answer.currentSubscriberCount()).isZero();
		answer.tryEmitValue("too late");
		assertThat(this.signals).hasSize(1);
	}

}
