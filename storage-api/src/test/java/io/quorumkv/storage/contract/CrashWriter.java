package io.quorumkv.storage.contract;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import io.quorumkv.storage.Storage;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The child process of {@link StorageCrashTest}: opens a backend through a
 * {@link StorageOpener}, writes numbered keys with 8 upserts in flight and prints
 * {@code ack <i> <epoch millis>} once the upsert of key {@code i} completed, until it is
 * killed.
 */
public final class CrashWriter {

	private CrashWriter() {
	}

	public static void main(String[] args) throws Exception {
		StorageOpener opener = (StorageOpener) Class.forName(args[0]).getConstructor().newInstance();
		Storage storage = opener.open(Path.of(args[1]), args[2]);
		PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
		out.println("open");
		out.flush();
		Flux.range(0, Integer.MAX_VALUE)
			.flatMap((i) -> storage.upsert(StorageCrashTest.entry(i)).then(Mono.fromRunnable(() -> {
				synchronized (out) {
					out.println("ack " + i + " " + System.currentTimeMillis());
					out.flush();
				}
			})), 8)
			.blockLast();
	}

}
