package io.quorumkv.service.ops;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The stall watchdog ({@link StallWatchdog}, docs/operations.md).
 *
 * @param stall an event loop that has not run a task for this long, or a JVM that stood
 * still for this long, is reported with the stacks of the threads that matter; 0 turns
 * the watchdog off
 * @param beat how often each event loop records that it runs, and the watchdog looks
 */
@ConfigurationProperties("quorumkv.watchdog")
public record WatchdogProperties(@DefaultValue("1s") Duration stall, @DefaultValue("250ms") Duration beat) {

	public WatchdogProperties {
		if (stall.isNegative()) {
			throw new IllegalArgumentException("quorumkv.watchdog.stall must be 0 (off) or positive");
		}
		if (beat.toMillis() < 1) {
			throw new IllegalArgumentException("quorumkv.watchdog.beat must be at least 1ms");
		}
		if (!stall.isZero() && stall.compareTo(beat.multipliedBy(2)) < 0) {
			throw new IllegalArgumentException("quorumkv.watchdog.stall must be at least twice quorumkv.watchdog.beat");
		}
	}

	/** Whether the watchdog runs. */
	public boolean enabled() {
		return !this.stall.isZero();
	}

}
