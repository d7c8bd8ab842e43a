package io.quorumkv.brokenbuild;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The current misbehaviour, read from a file (re-read at most every 200 ms), so that one
 * cluster serves several broken builds in turn: {@code none}, {@code ack-before-write},
 * {@code ack-without-write}, {@code reversed-lww}, {@code corrupt-reads},
 * {@code last-arrival-wins}, {@code ignore-ttl}, {@code scan-skips-recent},
 * {@code phantom-versions} ({@link BrokenStorage}), {@code wrong-304}
 * ({@link BrokenNotModified}), {@code paxos-skip-prepare} or {@code paxos-forget-promise}
 * ({@code io.quorumkv.service.paxos.BrokenPaxos}).
 */
final class BrokenMode {

	private final Path file;

	private volatile String mode = "none";

	private volatile long readAt;

	BrokenMode(Path file) {
		this.file = file;
	}

	String get() {
		long now = System.nanoTime();
		if (now - this.readAt > 200_000_000L) {
			this.readAt = now;
			try {
				this.mode = Files.readString(this.file).strip();
			}
			catch (IOException ex) {
				this.mode = "none";
			}
		}
		return this.mode;
	}

}
