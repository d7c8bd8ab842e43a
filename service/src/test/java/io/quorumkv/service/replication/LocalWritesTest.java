package io.quorumkv.service.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import io.quorumkv.service.peer.EventLoopTimers;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.StorageException;
import io.quorumkv.storage.StorageStats;
import io.quorumkv.storage.contract.ModelStorage;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

class LocalWritesTest {

	private static final long WAIT_SECONDS = 10;

	private final EventLoop loop = new DefaultEventLoop();

	private final EventLoopTimers timers = new EventLoopTimers(this.loop);

	private final RecordingStorage storage = new RecordingStorage();

	/** What each write's callbacks reported, in the order they ran. */
	private final List<String> answers = new CopyOnWriteArrayList<>();

	@AfterEach
	void close() throws InterruptedException {
		this.loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(WAIT_SECONDS, TimeUnit.SECONDS);
	}

	@Test
	void theWritesOfOneTurnOfALoopGoToTheStorageTogetherAfterTheTurn() throws Exception {
		LocalWrites writes = new LocalWrites(this.storage, Duration.ofSeconds(1), this.timers, true);
		List<String> seenInTheTurn = onLoop(() -> {
			write(writes, "a");
			write(writes, "b");
			write(writes, "c");
			return List.copyOf(this.answers);
		});
		assertThat(seenInTheTurn).as("nothing is written before the turn ends").isEmpty();
		awaitAnswers(3);
		assertThat(this.storage.calls).containsExactly("upsertAll [a, b, c]");
		assertThat(this.answers).containsExactly("a written", "b written", "c written");
		assertThat(this.storage.model.get(key("b")).block()).isNotNull();
		// The next turn is a new group.
		onLoop(() -> {
			write(writes, "d");
			return null;
		});
		awaitAnswers(4);
		assertThat(this.storage.calls).containsExactly("upsertAll [a, b, c]", "upsert d");
	}

	@Test
	void offTheLoopsEachWriteGoesAtOnceAlone() {
		LocalWrites writes = new LocalWrites(this.storage, Duration.ofSeconds(1), this.timers, true);
		write(writes, "a");
		write(writes, "b");
		assertThat(this.storage.calls).containsExactly("upsert a", "upsert b");
		assertThat(this.answers).containsExactly("a written", "b written");
	}

	@Test
	void withGroupingOffEachWriteGoesAtOnceAloneOnALoopToo() throws Exception {
		LocalWrites writes = new LocalWrites(this.storage, Duration.ofSeconds(1), this.timers, false);
		List<String> seenInTheTurn = onLoop(() -> {
			write(writes, "a");
			write(writes, "b");
			return List.copyOf(this.answers);
		});
		assertThat(seenInTheTurn).containsExactly("a written", "b written");
		assertThat(this.storage.calls).containsExactly("upsert a", "upsert b");
	}

	@Test
	void theWritesOfATurnGoTogetherAndAreAnsweredOnceItEnds() throws Exception {
		LocalWrites writes = new LocalWrites(this.storage, Duration.ofSeconds(1), this.timers, true);
		List<String> seenInTheTurn = onLoop(() -> {
			write(writes, "a");
			write(writes, "b");
			write(writes, "c");
			return List.copyOf(this.answers);
		});
		assertThat(seenInTheTurn).isEmpty();
		awaitAnswers(3);
		assertThat(this.storage.calls).containsExactly("upsertAll [a, b, c]");
	}

	@Test
	void aFailedGroupFailsEveryWriteOfItWithTheStoragesError() throws Exception {
		StorageException failure = new StorageException("disk full");
		this.storage.answer = (entries) -> Mono.error(failure);
		LocalWrites writes = new LocalWrites(this.storage, Duration.ofSeconds(1), this.timers, true);
		onLoop(() -> {
			write(writes, "a");
			write(writes, "b");
			return null;
		});
		awaitAnswers(2);
		assertThat(this.answers).containsExactly("a failed: " + failure, "b failed: " + failure);
	}

	@Test
	void aGroupTheStorageDoesNotAnswerFailsWithATimeout() throws Exception {
		Sinks.Empty<Void> never = Sinks.empty();
		this.storage.answer = (entries) -> never.asMono();
		LocalWrites writes = new LocalWrites(this.storage, Duration.ofMillis(50), this.timers, true);
		onLoop(() -> {
			write(writes, "a");
			write(writes, "b");
			return null;
		});
		awaitAnswers(2);
		assertThat(this.answers).allSatisfy((answer) -> assertThat(answer).contains(TimeoutException.class.getName()));
		assertThat(never.currentSubscriberCount()).as("the storage call is cancelled").isZero();
	}

	@Test
	void everyWriteOfAGroupIsAnsweredEvenWhenAnEarlierCallbackThrows() throws Exception {
		LocalWrites writes = new LocalWrites(this.storage, Duration.ofSeconds(1), this.timers, true);
		onLoop(() -> {
			writes.upsert(entry("a"), () -> {
				throw new IllegalStateException("a's callback broke");
			}, (error) -> this.answers.add("a failed"));
			write(writes, "b");
			return null;
		});
		awaitAnswers(1);
		assertThat(this.answers).containsExactly("b written");
	}

	@Test
	void aWriteMadeByAnAnswerGoesIntoTheNextGroup() throws Exception {
		LocalWrites writes = new LocalWrites(this.storage, Duration.ofSeconds(1), this.timers, true);
		onLoop(() -> {
			writes.upsert(entry("a"), () -> {
				this.answers.add("a written");
				write(writes, "c");
			}, (error) -> this.answers.add("a failed"));
			write(writes, "b");
			return null;
		});
		awaitAnswers(3);
		assertThat(this.storage.calls).containsExactly("upsertAll [a, b]", "upsert c");
		assertThat(this.answers).containsExactly("a written", "b written", "c written");
	}

	private void write(LocalWrites writes, String name) {
		writes.upsert(entry(name), () -> this.answers.add(name + " written"),
				(error) -> this.answers.add(name + " failed: " + error));
	}

	private <T> @Nullable T onLoop(java.util.concurrent.Callable<@Nullable T> action) throws Exception {
		return this.loop.submit(action).get(WAIT_SECONDS, TimeUnit.SECONDS);
	}

	private void awaitAnswers(int count) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
		while (this.answers.size() < count && System.nanoTime() < deadline) {
			Thread.sleep(5);
		}
		assertThat(this.answers).hasSizeGreaterThanOrEqualTo(count);
	}

	private static byte[] key(String name) {
		return name.getBytes(StandardCharsets.UTF_8);
	}

	private static Entry entry(String name) {
		return new Entry(key(name), key("value of " + name), 1);
	}

	/** A model storage that records its write calls and answers as told. */
	private static final class RecordingStorage implements Storage {

		final ModelStorage model = ModelStorage.inMemory();

		final List<String> calls = new CopyOnWriteArrayList<>();

		/** The answer to a write of these entries; by default the model's. */
		@Nullable Function<List<Entry>, Mono<Void>> answer;

		@Override
		public Mono<Entry> get(byte[] key) {
			return this.model.get(key);
		}

		@Override
		public Mono<Void> upsert(Entry entry) {
			this.calls.add("upsert " + name(entry));
			return answer(List.of(entry));
		}

		@Override
		public Mono<Void> upsertAll(List<Entry> entries) {
			List<String> names = new ArrayList<>();
			entries.forEach((entry) -> names.add(name(entry)));
			this.calls.add("upsertAll " + names);
			return answer(entries);
		}

		private Mono<Void> answer(List<Entry> entries) {
			Function<List<Entry>, Mono<Void>> answer = this.answer;
			return (answer != null) ? answer.apply(entries) : this.model.upsertAll(entries);
		}

		@Override
		public Flux<Entry> scan(byte[] fromInclusive, byte @Nullable [] toExclusive) {
			return this.model.scan(fromInclusive, toExclusive);
		}

		@Override
		public Mono<Void> flush() {
			return this.model.flush();
		}

		@Override
		public StorageStats stats() {
			return this.model.stats();
		}

		@Override
		public void close() {
			this.model.close();
		}

		private static String name(Entry entry) {
			return new String(entry.key(), StandardCharsets.UTF_8);
		}

	}

}
