package io.quorumkv.storage.derby;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.contract.Entries;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/** No JDBC call runs on the subscribing thread (in the service, a Netty event loop). */
class DerbyStorageThreadingTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	@TempDir
	Path dir;

	@Test
	void everyJdbcCallRunsOnTheBackendsExecutor() {
		Set<String> jdbcThreads = ConcurrentHashMap.newKeySet();
		ThreadFactory eventLoopNames = (task) -> new Thread(task, "reactor-http-nio-1");
		Scheduler eventLoop = Schedulers.fromExecutorService(Executors.newSingleThreadExecutor(eventLoopNames));
		try (DerbyStorage storage = DerbyStorage.open(DerbyStorageOptions.defaults(this.dir))) {
			storage.executor().beforeTask(() -> jdbcThreads.add(Thread.currentThread().getName()));
			byte[] key = Entries.bytes("k");
			List<Entry> scanned = Mono.defer(() -> storage.upsert(Entry.value(key, Entries.bytes("v"), 1)))
				.then(Mono.defer(() -> storage.get(key)))
				.then(Mono.defer(() -> storage.flush()))
				.thenMany(storage.scan(key, null))
				.subscribeOn(eventLoop)
				.collectList()
				.block(TIMEOUT);
			assertThat(scanned).hasSize(1);
		}
		finally {
			eventLoop.dispose();
		}
		assertThat(jdbcThreads).isNotEmpty().allMatch((name) -> name.startsWith(JdbcExecutor.THREAD_PREFIX));
	}

	@Test
	void subscribingThreadIsNeverUsedForJdbc() throws Exception {
		try (DerbyStorage storage = DerbyStorage.open(DerbyStorageOptions.defaults(this.dir))) {
			Set<Thread> jdbcThreads = ConcurrentHashMap.newKeySet();
			storage.executor().beforeTask(() -> jdbcThreads.add(Thread.currentThread()));
			CompletableFuture<Thread> caller = new CompletableFuture<>();
			CompletableFuture<Entry> read = new CompletableFuture<>();
			byte[] key = Entries.bytes("x");
			Thread loop = Thread.ofPlatform().name("reactor-http-epoll-2").start(() -> {
				storage.upsert(Entry.value(key, Entries.bytes("y"), 1))
					.then(storage.get(key))
					.subscribe(read::complete, read::completeExceptionally);
				caller.complete(Thread.currentThread());
			});
			loop.join();
			assertThat(read.get(30, TimeUnit.SECONDS)).isEqualTo(Entry.value(key, Entries.bytes("y"), 1));
			assertThat(jdbcThreads).isNotEmpty().doesNotContain(caller.get());
		}
	}

}
