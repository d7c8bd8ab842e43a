package io.quorumkv.service.backup;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

/**
 * How far a restore this node coordinates has come, read while it runs
 * ({@code qkv status}, {@code GET /actuator/quorumkv}): keys read from the snapshot set,
 * versions written, tombstones among them, keys with only versions newer than the time
 * restored, and the rate so far; then how it ended.
 */
public final class RestoreProgress {

	/** Where a restore is. */
	public enum State {

		RUNNING, DONE, FAILED

	}

	private final List<String> snapshots;

	private final long asOf;

	private final long startNanos = System.nanoTime();

	final AtomicLong keys = new AtomicLong();

	final AtomicLong written = new AtomicLong();

	final AtomicLong tombstones = new AtomicLong();

	final AtomicLong newerOnly = new AtomicLong();

	private volatile State state = State.RUNNING;

	private volatile long endNanos;

	private volatile @Nullable String failure;

	RestoreProgress(List<String> snapshots, long asOf) {
		this.snapshots = List.copyOf(snapshots);
		this.asOf = asOf;
	}

	void done() {
		this.endNanos = System.nanoTime();
		this.state = State.DONE;
	}

	void failed(Throwable error) {
		this.endNanos = System.nanoTime();
		this.failure = String.valueOf(error.getMessage());
		this.state = State.FAILED;
	}

	public State state() {
		return this.state;
	}

	/** Milliseconds since the restore started, or that it took once it ended. */
	public long elapsedMs() {
		long end = (this.state == State.RUNNING) ? System.nanoTime() : this.endNanos;
		return (end - this.startNanos) / 1_000_000;
	}

	/** The progress as JSON fields. */
	public Map<String, @Nullable Object> json() {
		Map<String, @Nullable Object> json = new LinkedHashMap<>();
		json.put("state", this.state.name().toLowerCase(Locale.ROOT));
		json.put("snapshots", this.snapshots);
		json.put("asOf", this.asOf);
		json.put("keys", this.keys.get());
		json.put("written", this.written.get());
		json.put("tombstones", this.tombstones.get());
		json.put("newerOnly", this.newerOnly.get());
		json.put("elapsedMs", elapsedMs());
		json.put("writtenPerSecond", perSecond());
		json.put("failure", this.failure);
		return json;
	}

	/** One line for the status table. */
	public String line() {
		return "restore of " + String.join(", ", this.snapshots) + " as of " + this.asOf + ": "
				+ this.state.name().toLowerCase(Locale.ROOT) + ", " + this.keys.get() + " keys read, "
				+ this.written.get() + " written (" + this.tombstones.get() + " tombstones), " + this.newerOnly.get()
				+ " newer than the time only, " + elapsedMs() + " ms, " + perSecond() + " written/s"
				+ ((this.failure != null) ? ": " + this.failure : "");
	}

	private long perSecond() {
		long ms = elapsedMs();
		return (ms > 0) ? this.written.get() * 1_000 / ms : 0;
	}

}
