package io.quorumkv.service.ops;

import io.micrometer.core.instrument.MeterRegistry;
import io.quorumkv.service.peer.EventLoopTimers;

import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.ContextClosedEvent;

/** The stall watchdog over the node's event loops. */
@Configuration(proxyBeanMethods = false)
class WatchdogConfiguration {

	@Bean(initMethod = "start", destroyMethod = "close")
	StallWatchdog stallWatchdog(EventLoopTimers timers, WatchdogProperties properties, MeterRegistry meters) {
		return new StallWatchdog(timers.loops(), properties, meters);
	}

	/** Stops watching when the context starts closing, before the loops shut down. */
	@Bean
	ApplicationListener<ContextClosedEvent> stallWatchdogStopper(StallWatchdog watchdog) {
		return (event) -> watchdog.close();
	}

}
