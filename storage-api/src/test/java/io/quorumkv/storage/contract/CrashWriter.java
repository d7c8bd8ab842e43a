package io.quorumkv.storage.contract;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The child process of {@link StorageCrashTest}: opens a backend through a
 * {@link StorageOpener}, writes with 8 upserts in flight and prints
 * {@code ack <key> <timestamp> <epoch millis>} once an upsert completed, until it is
 * killed.
 *
 * <p>
 * Arguments: opener class, folder, mode, workload, base timestamp, key count. Workload
 * {@code inserts}: key {@code i} once, with {@link StorageCrashTest#entry(int)}. Workload
 * {@code mixed}: {@link StorageCrashTest#version} of keys drawn from the key count
 * (overwrites), a fifth of them deletes, every eighth operation an {@code upsertAll} of
 * four entries; timestamps count up from the base.
 */
public final class CrashWriter {

	private CrashWriter() {
	}

	public static void main(String[] args) throws Exception {
		StorageOpener opener = (StorageOpener) Class.forName(args[0]).getConstructor().newInstance();
		Storage storage = opener.open(Path.of(args[1]), args[2]);
		boolean mixed = "mixed".equals(args[3]);
		long base = Long.parseLong(args[4]);
		int keys = Integer.parseInt(args[5]);
		PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
		out.println("open");
		out.flush();
		Flux.range(0, Integer.MAX_VALUE).flatMap((n) -> {
			List<Entry> entries = new ArrayList<>();
			if (!mixed) {
				entries.add(StorageCrashTest.entry(n));
			}
			else {
				int batch = (n % 8 == 7) ? 4 : 1;
				for (int j = 0; j < batch; j++) {
					long ts = base + 4L * n + j;
					entries.add(StorageCrashTest.version(StorageCrashTest.keyOf(ts, keys), ts));
				}
			}
			Mono<Void> write = (entries.size() == 1) ? storage.upsert(entries.get(0)) : storage.upsertAll(entries);
			return write.then(Mono.fromRunnable(() -> {
				long now = System.currentTimeMillis();
				synchronized (out) {
					for (Entry e : entries) {
						out.println("ack " + new String(e.key(), StandardCharsets.UTF_8).substring(6) + " "
								+ e.timestamp() + " " + now);
					}
					out.flush();
				}
			}));
		}, 8).blockLast();
	}

}
