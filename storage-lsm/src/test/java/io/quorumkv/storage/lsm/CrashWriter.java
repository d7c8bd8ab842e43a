package io.quorumkv.storage.lsm;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import io.quorumkv.storage.Entry;
import reactor.core.publisher.Flux;

/**
 * The child process of {@link CrashRecoveryTest}: writes numbered keys with 8 writers in
 * flight and prints {@code ack <i>} once the upsert of key {@code i} completed, until it
 * is killed.
 */
public final class CrashWriter {

	private CrashWriter() {
	}

	public static void main(String[] args) {
		Path dir = Path.of(args[0]);
		FsyncPolicy policy = FsyncPolicy.valueOf(args[1]);
		PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
		LsmStorage storage = LsmStorage.open(LsmOptions.defaults(dir)
			.withMemtableSize(128 << 10)
			.withCompaction(3, 512 << 10, 4, 128 << 10)
			.withFsync(policy));
		out.println("open");
		out.flush();
		Flux.range(0, Integer.MAX_VALUE)
			.flatMap((i) -> storage.upsert(Entry.value(CrashRecoveryTest.key(i), CrashRecoveryTest.value(i), 1L + i))
				.then(reactor.core.publisher.Mono.fromRunnable(() -> {
					synchronized (out) {
						out.println("ack " + i);
						out.flush();
					}
				})), 8)
			.blockLast();
	}

}
