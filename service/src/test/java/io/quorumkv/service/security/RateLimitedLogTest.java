package io.quorumkv.service.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

/** A line at most once per interval, with the count of those left out. */
class RateLimitedLogTest {

	@Test
	void writesTheFirstLineThenOnePerIntervalWithWhatWasLeftOut() {
		AtomicLong now = new AtomicLong(-5);
		List<String> lines = new ArrayList<>();
		AtomicInteger built = new AtomicInteger();
		RateLimitedLog log = new RateLimitedLog(lines::add, Duration.ofNanos(100), now::get);
		for (int i = 0; i < 50; i++) {
			int attempt = i;
			log.log(() -> "refused " + attempt + " (built " + built.incrementAndGet() + ")");
			now.addAndGet(3);
		}
		// 50 attempts 3 ns apart over 150 ns: a line at 0 ns and one at 100 ns or later.
		assertThat(lines).containsExactly("refused 0 (built 1)",
				"refused 34 (built 2) (and 33 more like it left out of the log since the last line)");
		assertThat(built).hasValue(2);
	}

}
