package io.quorumkv.storage.lsm.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import io.quorumkv.storage.Entry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The window of a key's first {@link MemTable#put}, between its two inserts (the hash
 * index of gets, the skip list of scans and flushes), held open by a {@link SyncPoint}.
 * Inside it a get and a scan must agree (a read that sees the version in flight and a
 * later one that does not would go back in time), and an overwrite of the key
 * acknowledged meanwhile must be seen by both, also after the first put finishes. A scan
 * that misses it reads an older version of the key from an older memtable or table (issue
 * 52).
 */
class InsertWindowTest {

	private static final byte[] KEY = "k".getBytes(StandardCharsets.UTF_8);

	private final ExecutorService first = Executors.newSingleThreadExecutor();

	@AfterEach
	void tearDown() throws InterruptedException {
		SyncPoint.set(null);
		this.first.shutdownNow();
		this.first.awaitTermination(20, TimeUnit.SECONDS);
	}

	@Test
	void anOverwriteAcknowledgedInsideAFirstPutsWindowIsSeenByGetsAndScans() throws Exception {
		MemTable memtable = new MemTable();
		Entry older = Entry.value(KEY, "first".getBytes(StandardCharsets.UTF_8), 1);
		Entry newer = Entry.value(KEY, "second".getBytes(StandardCharsets.UTF_8), 2);
		CountDownLatch inWindow = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		Thread[] held = new Thread[1];
		SyncPoint.set((point) -> {
			if (SyncPoint.BETWEEN_INSERTS.equals(point) && Thread.currentThread() == held[0]) {
				inWindow.countDown();
				await(release);
			}
		});
		CompletableFuture<Boolean> firstPut = CompletableFuture.supplyAsync(() -> {
			held[0] = Thread.currentThread();
			return memtable.put(older);
		}, this.first);
		try {
			assertThat(inWindow.await(20, TimeUnit.SECONDS)).as("the first put reached the window").isTrue();
			assertThat(scan(memtable)).as("a scan inside the window sees what a get sees")
				.isEqualTo((memtable.get(KEY) != null) ? List.of(memtable.get(KEY)) : List.of());
			assertThat(memtable.put(newer)).as("the overwrite was kept (acknowledged)").isTrue();
			assertThat(memtable.get(KEY)).as("a get inside the window").isEqualTo(newer);
			assertThat(scan(memtable)).as("a scan inside the window").containsExactly(newer);
		}
		finally {
			release.countDown();
		}
		firstPut.get(20, TimeUnit.SECONDS);
		assertThat(memtable.get(KEY)).as("a get after the first put").isEqualTo(newer);
		assertThat(scan(memtable)).as("a scan after the first put").containsExactly(newer);
		assertThat(memtable.count()).isOne();
	}

	private static List<Entry> scan(MemTable memtable) {
		List<Entry> all = new ArrayList<>();
		for (Iterator<Entry> it = memtable.iterator(new byte[0], null); it.hasNext();) {
			all.add(it.next());
		}
		return all;
	}

	private static void await(CountDownLatch latch) {
		try {
			latch.await(20, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
