package io.quorumkv.service.ops;

import java.util.LinkedHashMap;
import java.util.Map;

import io.quorumkv.service.cluster.ClusterProperties;
import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.cluster.PeerClocks;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.stereotype.Component;

/**
 * {@code clock} in {@code /actuator/health}: each peer's measured clock offset, and
 * {@code WARNING} (answered 200, ordered between {@code OUT_OF_SERVICE} and {@code UP})
 * once one exceeds {@code quorumkv.cluster.clock-offset-warning}: that peer's timestamps,
 * or this node's, are nearing {@code quorumkv.cluster.max-clock-skew}, past which they
 * are refused. A skewed clock is a warning, not a failure: the node still serves.
 */
@Component
class ClockHealthIndicator implements ReactiveHealthIndicator {

	static final Status WARNING = new Status("WARNING", "a peer's clock offset nears quorumkv.cluster.max-clock-skew");

	private final PeerClocks offsets;

	private final HybridLogicalClock clock;

	private final long warningMicros;

	ClockHealthIndicator(PeerClocks offsets, HybridLogicalClock clock, ClusterProperties settings) {
		this.offsets = offsets;
		this.clock = clock;
		this.warningMicros = settings.clockOffsetWarning().toNanos() / 1_000;
	}

	@Override
	public Mono<Health> health() {
		return Mono.fromSupplier(() -> {
			boolean warn = false;
			Map<String, @Nullable Object> peers = new LinkedHashMap<>();
			for (var entry : this.offsets.offsets().entrySet()) {
				PeerClocks.Offset offset = entry.getValue().orElse(null);
				if (offset == null) {
					peers.put(entry.getKey(), "not measured yet");
					continue;
				}
				warn |= Math.abs(offset.offsetMicros()) > this.warningMicros;
				peers.put(entry.getKey(),
						Map.of("offsetMs", offset.offsetMicros() / 1_000.0, "errorMs", offset.errorMicros() / 1_000.0));
			}
			return Health.status(warn ? WARNING : Status.UP)
				.withDetail("maxClockSkewMs", this.clock.maxSkew().toMillis())
				.withDetail("offsetWarningMs", this.warningMicros / 1_000)
				.withDetail("aheadOfWallMs", aheadOfWallMs(this.clock.last(), this.clock.wallMicros()))
				.withDetail("lastStamp", lastStamp(this.clock.last()))
				.withDetail("peers", peers)
				.build();
		});
	}

	/**
	 * How far the last stamp is ahead of the wall clock, in milliseconds; 0 when behind
	 * or before the first stamp (whose starting value, {@link Long#MIN_VALUE}, must not
	 * be subtracted from: the difference overflows).
	 */
	static long aheadOfWallMs(long last, long wallMicros) {
		return (last > wallMicros) ? (last - wallMicros) / 1_000 : 0;
	}

	/**
	 * The last stamp issued or adopted (microseconds), or "none yet" before the first.
	 */
	static Object lastStamp(long last) {
		return (last == Long.MIN_VALUE) ? "none yet" : last;
	}

}
