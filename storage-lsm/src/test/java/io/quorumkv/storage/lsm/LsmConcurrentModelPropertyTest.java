package io.quorumkv.storage.lsm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Keys;
import io.quorumkv.storage.lsm.ModelOps.Op;
import io.quorumkv.storage.lsm.io.FaultFileIo;
import io.quorumkv.storage.lsm.io.FaultFileIo.Tear;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;

/**
 * The model property with two to four threads at once on one store: each thread runs its
 * own random operations on keys only it writes (upserts, deletes, reads and scans of its
 * keys) plus flushes, forced flushes and compactions, and checks every read against its
 * own {@link PossibleStates}; after all are done the process is killed (a crash image
 * keeping what was written) and every thread's keys are checked on the recovered store.
 * Tombstone purge on or off. Tries: {@code jqwik.tries.default}.
 */
class LsmConcurrentModelPropertyTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	@Provide
	Arbitrary<List<List<Op>>> threads() {
		return Arbitraries.integers()
			.between(2, 4)
			.flatMap((n) -> ModelOps.operations(ModelOps.KEYS / n, false, 20, 150)
				.map((ops) -> ops.stream().filter((op) -> !(op instanceof ModelOps.Reopen)).toList())
				.list()
				.ofSize(n));
	}

	@Property(shrinking = ShrinkingMode.OFF)
	void concurrentClientsEachSeeTheirModel(@ForAll("threads") List<List<Op>> threads, @ForAll boolean purge)
			throws Exception {
		Path dir = TestDirs.create("lsm-concurrent-model");
		try {
			FaultFileIo io = new FaultFileIo(dir.resolve("live"), threads.size());
			LsmStorage storage = LsmStorage.open(ModelRun.options(dir.resolve("live"), FsyncPolicy.NEVER, purge), io);
			List<Client> clients = new ArrayList<>();
			List<String> anomalies = new CopyOnWriteArrayList<>();
			try {
				CountDownLatch start = new CountDownLatch(1);
				List<CompletableFuture<Void>> running = new ArrayList<>();
				for (int t = 0; t < threads.size(); t++) {
					Client client = new Client(storage, t, threads.size(), new PossibleStates(purge), anomalies);
					clients.add(client);
					List<Op> ops = threads.get(t);
					running.add(CompletableFuture.runAsync(() -> client.run(ops, start)));
				}
				start.countDown();
				for (CompletableFuture<Void> r : running) {
					r.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
				}
				io.powerLoss(Tear.KEEP_WRITTEN, dir.resolve("killed"));
			}
			finally {
				storage.close();
			}
			assertThat(anomalies).as("reads during the run").isEmpty();
			try (LsmStorage recovered = LsmStorage
				.open(ModelRun.options(dir.resolve("killed"), FsyncPolicy.NEVER, purge))) {
				for (Client client : clients) {
					client.model.crashed((w) -> true);
					client.storage = recovered;
					client.checkAll();
				}
			}
			assertThat(anomalies).as("after the kill").isEmpty();
		}
		finally {
			TestDirs.delete(dir);
		}
	}

	/** One thread: its keys are {@code i * threads + id}; the model holds only them. */
	private static final class Client {

		LsmStorage storage;

		private final int id;

		private final int threads;

		final PossibleStates model;

		private final List<String> anomalies;

		Client(LsmStorage storage, int id, int threads, PossibleStates model, List<String> anomalies) {
			this.storage = storage;
			this.id = id;
			this.threads = threads;
			this.model = model;
			this.anomalies = anomalies;
		}

		private byte[] key(int i) {
			return ModelOps.key(i * this.threads + this.id);
		}

		private boolean mine(byte[] key) {
			for (int i = 0; i * this.threads + this.id < ModelOps.KEYS; i++) {
				if (Keys.compare(key(i), key) == 0) {
					return true;
				}
			}
			return false;
		}

		void run(List<Op> ops, CountDownLatch start) {
			try {
				start.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
				for (Op op : ops) {
					apply(op);
					if (!this.anomalies.isEmpty()) {
						return;
					}
				}
			}
			catch (Exception ex) {
				this.anomalies.add("client " + this.id + " failed: " + ex);
			}
		}

		private void apply(Op op) throws Exception {
			switch (op) {
				case ModelOps.Put p -> write(Entry.value(key(p.key()), p.value(), p.timestamp()));
				case ModelOps.Delete d -> write(Entry.tombstone(key(d.key()), d.timestamp()));
				case ModelOps.Get g -> {
					String anomaly = this.model.read(key(g.key()), this.storage.get(key(g.key())).block(TIMEOUT));
					if (anomaly != null) {
						this.anomalies.add("client " + this.id + ": " + anomaly);
					}
				}
				case ModelOps.Scan s -> checkAll();
				case ModelOps.Flush f -> {
					this.storage.flush().block(TIMEOUT);
					this.model.durable();
				}
				case ModelOps.ForceFlush f -> this.storage.forceFlush().get(60, TimeUnit.SECONDS);
				case ModelOps.Compact c -> this.storage.forceCompaction().get(60, TimeUnit.SECONDS);
				default -> throw new IllegalArgumentException("not run concurrently: " + op);
			}
		}

		private void write(Entry e) {
			this.storage.upsert(e).block(TIMEOUT);
			this.model.upsert(e);
		}

		/** A full scan, checked on this client's keys. */
		void checkAll() {
			Map<byte[], Entry> found = new TreeMap<>(Keys.ORDER);
			for (Entry e : this.storage.scan(new byte[] { 0 }, null).collectList().block(TIMEOUT)) {
				if (mine(e.key())) {
					found.put(e.key(), e);
				}
			}
			for (String anomaly : this.model.scan(new byte[] { 0 }, null, found)) {
				this.anomalies.add("client " + this.id + ": " + anomaly);
			}
		}

	}

}
