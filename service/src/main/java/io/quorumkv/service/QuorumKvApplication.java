package io.quorumkv.service;

import reactor.netty.ReactorNetty;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * Starts one QuorumKV node. Spring Boot's own security auto-configuration is left out: it
 * would put every request behind a generated password. The node builds its security
 * filter chain itself, and only where it is needed (io.quorumkv.service.security).
 */
@SpringBootApplication(excludeName = { "org.springframework.boot.security.autoconfigure.SecurityAutoConfiguration",
		"org.springframework.boot.security.autoconfigure.ReactiveUserDetailsServiceAutoConfiguration",
		"org.springframework.boot.security.autoconfigure.web.reactive.ReactiveWebSecurityAutoConfiguration",
		"org.springframework.boot.security.autoconfigure.actuate.web.reactive.ReactiveManagementWebSecurityAutoConfiguration" })
@ConfigurationPropertiesScan
public class QuorumKvApplication {

	static final String LEAK_DETECTION_LEVEL = "io.netty.leakDetection.level";

	public static void main(String[] args) {
		defaultEventLoops(Runtime.getRuntime().availableProcessors());
		defaultLeakDetection();
		SpringApplication.run(QuorumKvApplication.class, args);
	}

	/**
	 * One event loop per core unless {@code -Dreactor.netty.ioWorkerCount} says
	 * otherwise. Reactor Netty's own default is the core count but at least four; a node
	 * never blocks a loop, so more loops than cores only add thread switches and spread
	 * the batch calls over more connections (docs/performance.md: on two cores, three
	 * nodes with two loops each spent less CPU per replicated write than with four). Must
	 * run before Reactor Netty's loop resources are first used.
	 */
	static void defaultEventLoops(int cores) {
		if (System.getProperty(ReactorNetty.IO_WORKER_COUNT) == null) {
			System.setProperty(ReactorNetty.IO_WORKER_COUNT, Integer.toString(Math.max(1, cores)));
		}
	}

	/**
	 * Netty's buffer leak detection off unless {@code -Dio.netty.leakDetection.level}
	 * says otherwise. Netty's default samples one buffer in 128 and records a stack trace
	 * at each of its uses, on the request path; the tests, which do not start through
	 * this method, keep that default and catch leaks (docs/performance.md, "What the
	 * profiles say remains"). Must run before Netty's leak detector is first used.
	 */
	static void defaultLeakDetection() {
		if (System.getProperty(LEAK_DETECTION_LEVEL) == null
				&& System.getProperty("io.netty.leakDetectionLevel") == null) {
			System.setProperty(LEAK_DETECTION_LEVEL, "disabled");
		}
	}

}
