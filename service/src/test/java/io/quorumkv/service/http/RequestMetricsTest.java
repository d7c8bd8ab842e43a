package io.quorumkv.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

class RequestMetricsTest {

	@Test
	void oneTimerPerOperationAndStatus() {
		SimpleMeterRegistry registry = new SimpleMeterRegistry();
		RequestMetrics metrics = new RequestMetrics(registry);
		long start = System.nanoTime();
		metrics.record("put", 201, start);
		metrics.record("put", 201, start);
		metrics.record("put", 503, start);
		metrics.record("get", 201, start);
		metrics.record("get", 999, start);
		metrics.record("get", 999, start);
		assertThat(registry.get("quorumkv.requests").tags("op", "put", "status", "201").timer().count()).isEqualTo(2);
		assertThat(registry.get("quorumkv.requests").tags("op", "put", "status", "503").timer().count()).isOne();
		assertThat(registry.get("quorumkv.requests").tags("op", "get", "status", "201").timer().count()).isOne();
		assertThat(registry.get("quorumkv.requests").tags("op", "get", "status", "999").timer().count())
			.as("a status outside the cached range is still counted")
			.isEqualTo(2);
		assertThat(registry.get("quorumkv.requests").timers()).hasSize(4);
	}

}
